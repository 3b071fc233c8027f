#!/usr/bin/env python3
"""Write the training reference data that kerascpp's fit() must reproduce.

    .venv/bin/python scripts/make_training_fixtures.py [--out tests/fixtures/training] [--only CASE ...]

Writes tests/fixtures/training/<case>/ (see tests/fixtures/training/README.md): the initial
compiled model (model.keras; model.h5 for tf_keras cases), the data (*.npy, float32), meta.json
(compile config as serialized by Keras, fit arguments, History, per-batch logs, evaluate() results,
file names) and the trained state (trained.keras, final_weights.npz, optimizer_state.npz).

Roles (each in its own subprocess, so Keras 3 and tf_keras never share a process):
  keras3          every Keras 3 case (fit in this process)
  keras3_reload   load resume_keras3/resume.{keras,h5} in a fresh process and continue fit
  tf_keras        the tf_keras resume case
  tf_keras_reload load resume_tf_keras/resume.h5 in a fresh process and continue fit
The driver (no --role) runs them in that order and prints a summary table.
Deterministic (keras.utils.set_random_seed per case, seeded numpy data, shuffle=False, 1 TF thread)
and idempotent (every case folder is deleted and rewritten; README.md is left alone).
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixtures.training_seq import sequence_cases  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_OUT = os.path.join(ROOT, "tests", "fixtures", "training")
F32 = np.float32


# ----------------------------------------------------------------------------- environment

def child_env():
    env = dict(os.environ)
    env.update(TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0",
               KERAS_BACKEND="tensorflow", OMP_NUM_THREADS="1", TF_NUM_INTRAOP_THREADS="1",
               TF_NUM_INTEROP_THREADS="1")
    env.pop("TF_USE_LEGACY_KERAS", None)
    return env


def setup_tf():
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.experimental.enable_op_determinism()
    return tf


def import_keras(flavour):
    tf = setup_tf()
    if flavour == "keras3":
        import keras as K
    else:
        import tf_keras as K
    return K, tf


def case_seed(case):
    return zlib.crc32(case.encode()) & 0x7FFFFFFF


def jdump(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=False)
        f.write("\n")


def jload(path):
    with open(path) as f:
        return json.load(f)


def floats(d):
    """History / logs dict -> {key: [float, ...]} (float() of the float32 value: exact in JSON)."""
    return {k: [float(v) for v in vs] for k, vs in d.items()}


# ----------------------------------------------------------------------------- data

def cls_data(rng, n, k=3, d=8):
    x = rng.standard_normal((n, d)).astype(F32)
    logits = x[:, :k] + 0.7 * rng.standard_normal((n, k))
    labels = np.argmax(logits, axis=1)
    return x, labels


def onehot(labels, k=3):
    return np.eye(k, dtype=F32)[labels]


def split(x, y, nv):
    return {"x": x[:-nv], "y": y[:-nv], "val_x": x[-nv:], "val_y": y[-nv:]}


def data_cls3(rng, n=64, nv=0):
    x, lab = cls_data(rng, n + nv)
    y = onehot(lab)
    return split(x, y, nv) if nv else {"x": x, "y": y}


def data_reg1(rng, n=52):
    x = rng.standard_normal((n, 8)).astype(F32)
    y = (0.5 * x[:, :4].sum(axis=1, keepdims=True) - 0.3 * x[:, 4:5] ** 2
         + 0.1 * rng.standard_normal((n, 1))).astype(F32)
    return {"x": x, "y": y}


def data_img(rng, n=48):
    x = rng.standard_normal((n, 12, 12, 2)).astype(F32)
    # label = quadrant with the largest mean of channel 0 (learnable, 4 classes)
    q = np.stack([x[:, :6, :6, 0].mean((1, 2)), x[:, :6, 6:, 0].mean((1, 2)),
                  x[:, 6:, :6, 0].mean((1, 2)), x[:, 6:, 6:, 0].mean((1, 2))], axis=1)
    return {"x": x, "y": np.argmax(q, axis=1).astype(F32)}


def data_multilabel(rng, n=64, nv=0, k=2):
    x = rng.standard_normal((n + nv, 8)).astype(F32)
    z = x[:, :k] - 0.5 * x[:, k:2 * k] + 0.5 * rng.standard_normal((n + nv, k))
    y = (z > 0).astype(F32)
    return split(x, y, nv) if nv else {"x": x, "y": y}


def data_weighted(rng):
    d = data_cls3(rng)
    d["sample_weight"] = rng.uniform(0.2, 2.0, size=(64,)).astype(F32)
    return d


def data_for_loss(kind):
    def make(rng, n=64):
        x = rng.standard_normal((n, 8)).astype(F32)
        base = x[:, :3] + 0.3 * rng.standard_normal((n, 3))
        if kind == "reg":
            y = base
        elif kind == "reg_big":        # |error| crosses huber's delta=1
            y = 2.5 * base
        elif kind == "positive":
            y = np.exp(0.5 * base)
        elif kind == "dist":           # probability rows for kld
            e = np.exp(base)
            y = e / e.sum(axis=1, keepdims=True)
        elif kind == "counts":
            y = rng.poisson(np.exp(0.4 * base)).astype(F32)
        elif kind == "pm1":            # hinge labels in {-1, 1}
            y = np.where(base > 0, 1.0, -1.0)
        elif kind == "onehot":
            y = onehot(np.argmax(base, axis=1))
        elif kind == "binary":
            y = (base > 0).astype(F32)
        else:
            raise ValueError(kind)
        return {"x": x, "y": y.astype(F32)}
    return make


# ----------------------------------------------------------------------------- models

def mlp(K, hidden_act="relu", out=3, out_act="softmax"):
    L = K.layers
    return K.Sequential([K.Input((8,)), L.Dense(16, activation=hidden_act, name="hidden"),
                         L.Dense(out, activation=out_act, name="out")], name="mlp")


def cnn(K, head):
    L = K.layers
    return K.Sequential([
        K.Input((12, 12, 2)),
        L.Conv2D(4, 3, activation="relu", padding="same", name="conv1"),
        L.MaxPooling2D(2, name="pool"),
        L.Conv2D(6, 3, strides=1, padding="valid", activation="relu", name="conv2"),
        L.GlobalAveragePooling2D(name="gap") if head == "gap" else L.Flatten(name="flatten"),
        L.Dense(4, name="out")], name="cnn")


def bn_mlp(K):
    L = K.layers
    return K.Sequential([K.Input((8,)), L.Dense(16, name="hidden"),
                         L.BatchNormalization(momentum=0.9, name="bn"),
                         L.Activation("relu", name="relu"),
                         L.Dense(2, activation="sigmoid", name="out")], name="bn_mlp")


def constrained_mlp(K):
    """Every keras.constraints class, applied after each update (a large learning rate makes them bind)."""
    L, C = K.layers, K.constraints
    return K.Sequential([K.Input((8,)),
                         L.Dense(16, activation="relu", kernel_constraint=C.MaxNorm(0.6),
                                 bias_constraint=C.NonNeg(), name="max_norm"),
                         L.Dense(12, activation="tanh", kernel_constraint=C.UnitNorm(axis=0), name="unit_norm"),
                         L.Dense(3, activation="softmax", kernel_constraint=C.MinMaxNorm(0.3, 0.9, rate=0.5),
                                 name="min_max_norm")], name="constrained_mlp")


# ----------------------------------------------------------------------------- cases
# Each case: model(K), data(rng), optimizer(K), loss(K), metrics, fit kwargs (batch_size, epochs,
# shuffle, validation_split / "validation_data": True / class_weight / "sample_weight": True).

def _c(model, data, opt, loss, metrics, **fit):
    fit.setdefault("shuffle", False)
    return {"model": model, "data": data, "optimizer": opt, "loss": loss,
            "metrics": metrics, "fit": fit}


MLP3 = lambda K: mlp(K)  # noqa: E731
CCE = lambda K: "categorical_crossentropy"  # noqa: E731
SPARSE_LOGITS = lambda K: K.losses.SparseCategoricalCrossentropy(from_logits=True)  # noqa: E731


def _opt_case(make_opt):
    return _c(MLP3, data_cls3, make_opt, CCE, ["accuracy"], batch_size=16, epochs=2)


def _sched(name, **kw):
    return lambda K: getattr(K.optimizers.schedules, name)(**kw)


CASES = {
    "mlp_sgd": _c(MLP3, lambda r: data_cls3(r, 64, 16),
                  lambda K: K.optimizers.SGD(learning_rate=0.1, momentum=0.9), CCE, ["accuracy"],
                  batch_size=16, epochs=4, validation_data=True),
    "mlp_adam": _c(lambda K: mlp(K, "tanh", 1, None), data_reg1,
                   lambda K: K.optimizers.Adam(1e-2), lambda K: "mse", ["mae"],
                   batch_size=10, epochs=4, validation_split=0.25),
    "cnn_sgd": _c(lambda K: cnn(K, "gap"), data_img, lambda K: K.optimizers.SGD(0.05),
                  SPARSE_LOGITS, ["accuracy"], batch_size=16, epochs=3),
    "cnn_adam": _c(lambda K: cnn(K, "flatten"), data_img, lambda K: K.optimizers.Adam(1e-3),
                   SPARSE_LOGITS, ["accuracy"], batch_size=16, epochs=3),
    "constraints": _c(constrained_mlp, data_cls3, lambda K: K.optimizers.SGD(0.5, momentum=0.9), CCE, ["accuracy"],
                      batch_size=16, epochs=3),
    "bn_mlp": _c(bn_mlp, lambda r: data_multilabel(r, 64, 16), lambda K: K.optimizers.Adam(1e-2),
                 lambda K: "binary_crossentropy", ["accuracy"], batch_size=16, epochs=3,
                 validation_data=True),
    "weighted_sample": _c(MLP3, data_weighted, lambda K: K.optimizers.RMSprop(1e-2), CCE,
                          ["accuracy"], batch_size=16, epochs=3, sample_weight=True),
    "weighted_class": _c(MLP3, data_cls3, lambda K: K.optimizers.RMSprop(1e-2), CCE, ["accuracy"],
                         batch_size=16, epochs=3, class_weight={0: 1.0, 1: 2.0, 2: 0.5}),
    "opt_adamw": _opt_case(lambda K: K.optimizers.AdamW(1e-2, weight_decay=0.05)),
    "opt_adagrad": _opt_case(lambda K: K.optimizers.Adagrad(0.1)),
    "opt_adadelta": _opt_case(lambda K: K.optimizers.Adadelta(1.0)),
    "opt_adamax": _opt_case(lambda K: K.optimizers.Adamax(1e-2)),
    "opt_nadam": _opt_case(lambda K: K.optimizers.Nadam(1e-2)),
    "opt_lion": _opt_case(lambda K: K.optimizers.Lion(1e-3)),
    "opt_sgd_nesterov": _opt_case(lambda K: K.optimizers.SGD(0.05, momentum=0.9, nesterov=True)),
    "opt_sgd_weight_decay": _opt_case(lambda K: K.optimizers.SGD(0.1, weight_decay=0.01)),
    "opt_rmsprop_centered": _opt_case(
        lambda K: K.optimizers.RMSprop(1e-2, momentum=0.5, centered=True)),
    "opt_adam_amsgrad": _opt_case(lambda K: K.optimizers.Adam(1e-2, amsgrad=True)),
    "opt_adam_clipnorm": _opt_case(lambda K: K.optimizers.Adam(1e-2, clipnorm=0.5)),
    "opt_adam_global_clipnorm": _opt_case(lambda K: K.optimizers.Adam(1e-2, global_clipnorm=0.5)),
    "opt_sgd_clipvalue": _opt_case(lambda K: K.optimizers.SGD(0.1, clipvalue=0.1)),
    "opt_adam_expdecay": _opt_case(lambda K: K.optimizers.Adam(_sched(
        "ExponentialDecay", initial_learning_rate=1e-2, decay_steps=3, decay_rate=0.5)(K))),
    "opt_adam_expdecay_staircase": _opt_case(lambda K: K.optimizers.Adam(_sched(
        "ExponentialDecay", initial_learning_rate=1e-2, decay_steps=3, decay_rate=0.5,
        staircase=True)(K))),
    "opt_sgd_cosine": _opt_case(lambda K: K.optimizers.SGD(_sched(
        "CosineDecay", initial_learning_rate=0.1, decay_steps=6, alpha=0.1)(K), momentum=0.9)),
    "opt_sgd_piecewise": _opt_case(lambda K: K.optimizers.SGD(_sched(
        "PiecewiseConstantDecay", boundaries=[2, 5], values=[0.2, 0.05, 0.01])(K))),
}


def _loss_case(kind, out_act, loss):
    return _c(lambda K: mlp(K, "relu", 3, out_act), data_for_loss(kind),
              lambda K: K.optimizers.SGD(0.05), loss, [], batch_size=16, epochs=2)


CASES.update({
    "loss_mae": _loss_case("reg", None, lambda K: "mae"),
    "loss_mape": _loss_case("positive", None, lambda K: "mape"),
    "loss_msle": _loss_case("positive", "softplus", lambda K: "msle"),
    "loss_huber": _loss_case("reg_big", None, lambda K: "huber"),
    "loss_log_cosh": _loss_case("reg_big", None, lambda K: "log_cosh"),
    "loss_kld": _loss_case("dist", "softmax", lambda K: "kld"),
    "loss_poisson": _loss_case("counts", "softplus", lambda K: "poisson"),
    "loss_hinge": _loss_case("pm1", None, lambda K: "hinge"),
    "loss_squared_hinge": _loss_case("pm1", None, lambda K: "squared_hinge"),
    "loss_categorical_hinge": _loss_case("onehot", None, lambda K: "categorical_hinge"),
    "loss_bce_smoothing": _loss_case(
        "binary", "sigmoid", lambda K: K.losses.BinaryCrossentropy(label_smoothing=0.1)),
    "loss_cce_logits_smoothing": _loss_case(
        "onehot", None,
        lambda K: K.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)),
})



# Sequences (issue 15): scripts/fixtures/training_seq.py.
CASES.update(sequence_cases(_c, CCE))


RESUME_K3 = "resume_keras3"
RESUME_TFK = "resume_tf_keras"
K3_CASES = list(CASES) + [RESUME_K3]
ALL_CASES = K3_CASES + [RESUME_TFK]


# ----------------------------------------------------------------------------- fit helpers

def make_recorder(K):
    class Recorder(K.callbacks.Callback):
        """Per-batch logs (Keras' running means since the epoch began) and each step's learning rate."""

        def __init__(self):
            super().__init__()
            self.batch_logs, self.batch_lr = [], []

        def on_epoch_begin(self, epoch, logs=None):
            self.batch_logs.append([])
            self.batch_lr.append([])

        def on_train_batch_begin(self, batch, logs=None):
            # the rate this step uses (schedule evaluated at the current iterations, pre-update)
            try:
                self.batch_lr[-1].append(float(np.asarray(self.model.optimizer.learning_rate)))
            except Exception:  # noqa: BLE001
                self.batch_lr[-1].append(None)

        def on_train_batch_end(self, batch, logs=None):
            self.batch_logs[-1].append({k: float(v) for k, v in (logs or {}).items()})
    return Recorder()


def fit_kwargs(spec_fit, data, folder_files):
    kw = {"batch_size": spec_fit["batch_size"], "epochs": spec_fit["epochs"],
          "shuffle": spec_fit["shuffle"], "verbose": 0}
    meta = {"batch_size": spec_fit["batch_size"], "epochs": spec_fit["epochs"],
            "initial_epoch": spec_fit.get("initial_epoch", 0), "shuffle": spec_fit["shuffle"],
            "validation_split": spec_fit.get("validation_split", 0.0),
            "validation_data": None, "sample_weight": None, "class_weight": None,
            "validation_batch_size": None, "steps_per_epoch": None}
    if "initial_epoch" in spec_fit:
        kw["initial_epoch"] = spec_fit["initial_epoch"]
    if spec_fit.get("validation_split"):
        kw["validation_split"] = spec_fit["validation_split"]
    if spec_fit.get("validation_data"):
        kw["validation_data"] = (data["val_x"], data["val_y"])
        meta["validation_data"] = [folder_files["val_x"], folder_files["val_y"]]
    if spec_fit.get("sample_weight"):
        kw["sample_weight"] = data["sample_weight"]
        meta["sample_weight"] = folder_files["sample_weight"]
    if spec_fit.get("class_weight"):
        kw["class_weight"] = spec_fit["class_weight"]
        meta["class_weight"] = {str(k): v for k, v in spec_fit["class_weight"].items()}
    n = len(data["x"])
    # Keras (3 and tf_keras): split_at = floor(n * (1 - validation_split)); the tail validates.
    n_train = int(np.floor(n * (1.0 - meta["validation_split"]))) if meta["validation_split"] else n
    meta["num_train_samples"] = int(n_train)
    meta["num_val_samples"] = int(n - n_train) if meta["validation_split"] else (
        len(data["val_x"]) if meta["validation_data"] else 0)
    meta["steps_per_epoch_resolved"] = int(np.ceil(n_train / spec_fit["batch_size"]))
    return kw, meta


def save_arrays(folder, data):
    files = {}
    for k, a in data.items():
        files[k] = f"{k}.npy"
        np.save(os.path.join(folder, files[k]), np.asarray(a, dtype=F32))
    return files


def var_path(v):
    return str(getattr(v, "path", None) or v.name).split(":")[0]


def save_vars(path, variables):
    arrs, keys = {}, []
    for i, v in enumerate(variables):
        key = f"{i:03d}:{var_path(v)}"
        keys.append(key)
        arrs[key] = np.asarray(v.numpy())
    np.savez(path, **arrs)
    return keys


def resolved_metrics(model):
    """Keras 3: the metric classes that metric strings ("accuracy") resolved to."""
    out = []
    cm = getattr(model, "_compile_metrics", None)
    for ml in getattr(cm, "_flat_metrics", []) or []:
        for m in (getattr(ml, "metrics", [ml]) if ml is not None else []):
            if m is None:
                continue
            out.append({"name": m.name, "class_name": type(m).__name__,
                        "output": getattr(ml, "output_name", None)})
    return out


def versions(K, tf, flavour):
    return {"writer": flavour, "keras_version": K.__version__, "tensorflow_version": tf.__version__,
            "numpy_version": np.__version__, "backend": "tensorflow"}


def history_diff(a, b):
    keys = set(a) & set(b)
    if not keys:
        return None
    return max(abs(x - y) for k in keys for x, y in zip(a[k], b[k]))


# ----------------------------------------------------------------------------- Keras 3 cases

def build_compiled(K, spec):
    model = spec["model"](K)
    model.compile(optimizer=spec["optimizer"](K), loss=spec["loss"](K), metrics=spec["metrics"],
                  jit_compile=False, run_eagerly=False)
    return model


def run_k3_case(K, tf, case, folder):
    spec = CASES[case]
    K.backend.clear_session()
    K.utils.set_random_seed(case_seed(case))
    data = spec["data"](np.random.default_rng(case_seed(case)))
    files = save_arrays(folder, data)
    model = build_compiled(K, spec)
    compile_cfg = copy.deepcopy(model.get_compile_config())
    model.save(os.path.join(folder, "model.keras"))
    files["model"] = "model.keras"
    kw, fit_meta = fit_kwargs(spec["fit"], data, files)
    rec = make_recorder(K)
    hist = model.fit(data["x"], data["y"], callbacks=[rec], **kw)
    meta = {"case": case, **versions(K, tf, "keras3"),
            "compile": compile_cfg, "resolved_metrics": resolved_metrics(model),
            "fit": fit_meta, "history": floats(hist.history),
            "batch_logs": rec.batch_logs, "batch_learning_rate": rec.batch_lr}
    eval_kw = {"batch_size": spec["fit"]["batch_size"], "verbose": 0, "return_dict": True}
    meta["evaluate"] = {k: float(v) for k, v in
                        model.evaluate(data["x"], data["y"], **eval_kw).items()}
    meta["evaluate_args"] = {"x": files["x"], "y": files["y"], "batch_size": eval_kw["batch_size"],
                             "sample_weight": None}
    if "sample_weight" in data:
        meta["evaluate_weighted"] = {k: float(v) for k, v in model.evaluate(
            data["x"], data["y"], sample_weight=data["sample_weight"], **eval_kw).items()}
    if not case.startswith(("opt_", "loss_")):   # size: the npz files carry the same numbers
        model.save(os.path.join(folder, "trained.keras"))
        files["trained"] = "trained.keras"
    if case == "mlp_sgd":   # also a legacy-h5 copy with the SGD momentum slots
        model.save(os.path.join(folder, "trained.h5"))
        files["trained_h5"] = "trained.h5"
    files["final_weights"] = "final_weights.npz"
    meta["final_weights_keys"] = save_vars(os.path.join(folder, "final_weights.npz"),
                                           model.weights)
    files["optimizer_state"] = "optimizer_state.npz"
    meta["optimizer_state_keys"] = save_vars(os.path.join(folder, "optimizer_state.npz"),
                                             model.optimizer.variables)
    meta["optimizer_iterations"] = int(model.optimizer.iterations.numpy())
    meta["files"] = files
    jdump(os.path.join(folder, "meta.json"), meta)
    return summary_row(case, meta)


def run_resume(K, tf, flavour, case, folder):
    """mlp_adam's model/data/fit args: 2 epochs, save, 2 more epochs (initial_epoch=2)."""
    spec = CASES["mlp_adam"]
    K.backend.clear_session()
    K.utils.set_random_seed(case_seed("mlp_adam"))
    data = spec["data"](np.random.default_rng(case_seed("mlp_adam")))   # mlp_adam's data
    files = save_arrays(folder, data)
    model = build_compiled(K, spec) if flavour == "keras3" else build_compiled_tfk(K, spec)
    notes = []
    if flavour == "keras3":
        compile_cfg = copy.deepcopy(model.get_compile_config())
        save_vars(os.path.join(folder, "initial_weights.npz"), model.weights)
        files["initial_weights"] = "initial_weights.npz"
        notes.append("same seed, data and initial weights as mlp_adam: history equals mlp_adam's "
                     "epochs 1-2 and resume.history its epochs 3-4")
    else:
        compile_cfg = tfk_compile_cfg(K, model)
        src = os.path.join(os.path.dirname(folder), RESUME_K3, "initial_weights.npz")
        if os.path.exists(src):
            w = np.load(src)
            model.set_weights([w[k] for k in w.files])
            notes.append("initial weights copied from resume_keras3/initial_weights.npz (= "
                         "mlp_adam's), so this trajectory should track resume_keras3's")
        else:
            notes.append("tf_keras' own glorot initial weights (resume_keras3 not written yet)")
    init_name = "model.keras" if flavour == "keras3" else "model.h5"
    model.save(os.path.join(folder, init_name))
    files["model"] = init_name
    fit1 = dict(spec["fit"], epochs=2)
    fit2 = dict(spec["fit"], epochs=4, initial_epoch=2)
    kw1, meta1 = fit_kwargs(fit1, data, files)
    kw2, meta2 = fit_kwargs(fit2, data, files)
    rec1, rec2 = make_recorder(K), make_recorder(K)
    h1 = model.fit(data["x"], data["y"], callbacks=[rec1], **kw1)
    saved = {}
    if flavour == "keras3":
        model.save(os.path.join(folder, "resume.keras"))
        saved["resume_keras"] = "resume.keras"
        # Keras 3.15 bug: legacy-h5 save pops "optimizer" out of model._compile_config.config,
        # so every later .keras save would lose compile_config.optimizer. Put it back.
        live = model._compile_config.config
        backup = dict(live)
        model.save(os.path.join(folder, "resume.h5"))   # legacy h5, include_optimizer=True
        live.clear()
        live.update(backup)
        notes.append("Keras 3.15: saving legacy .h5 removes 'optimizer' from the model's compile "
                     "config (later .keras saves lack it); restored here before trained.keras")
    else:
        model.save(os.path.join(folder, "resume.h5"))   # include_optimizer=True
    saved["resume_h5"] = "resume.h5"
    files.update(saved)
    files["resume_optimizer_state"] = "resume_optimizer_state.npz"
    resume_keys = save_vars(os.path.join(folder, "resume_optimizer_state.npz"),
                            model.optimizer.variables)
    h2 = model.fit(data["x"], data["y"], callbacks=[rec2], **kw2)
    meta = {"case": case, **versions(K, tf, flavour), "notes": notes, "compile": compile_cfg,
            "fit": meta1, "history": floats(h1.history),
            "batch_logs": rec1.batch_logs, "batch_learning_rate": rec1.batch_lr,
            "resume": {"from_files": list(saved.values()), "fit": meta2,
                       "history": floats(h2.history), "batch_logs": rec2.batch_logs,
                       "optimizer_state_keys": resume_keys,
                       "note": "history = epochs 1-2 from model.*; resume.history = epochs 3-4 "
                               "continued in the same process after saving resume.*"}}
    if flavour == "keras3":
        meta["resolved_metrics"] = resolved_metrics(model)
    meta["evaluate"] = {k: float(v) for k, v in model.evaluate(
        data["x"], data["y"], batch_size=10, verbose=0, return_dict=True).items()}
    meta["evaluate_args"] = {"x": files["x"], "y": files["y"], "batch_size": 10,
                             "sample_weight": None}
    trained = "trained.keras" if flavour == "keras3" else "trained.h5"
    model.save(os.path.join(folder, trained))
    files["trained"] = trained
    files["final_weights"] = "final_weights.npz"
    meta["final_weights_keys"] = save_vars(os.path.join(folder, "final_weights.npz"),
                                           model.weights)
    files["optimizer_state"] = "optimizer_state.npz"
    meta["optimizer_state_keys"] = save_vars(os.path.join(folder, "optimizer_state.npz"),
                                             model.optimizer.variables)
    meta["optimizer_iterations"] = int(model.optimizer.iterations.numpy())
    meta["files"] = files
    jdump(os.path.join(folder, "meta.json"), meta)
    return summary_row(case, meta)


def _manual_h5_restore(K, path, meta):
    """Keras 3: rebuild from the .h5 by hand (weights + optimizer_weights in weight_names order),
    i.e. what a correct loader would do; proves the file holds everything needed to resume."""
    import h5py
    model = K.models.load_model(path, compile=False)
    c = meta["compile"]
    # deepcopy: optimizers.deserialize() lower-cases class_name in the dict it is given
    model.compile(optimizer=K.optimizers.deserialize(copy.deepcopy(c["optimizer"])), loss=c["loss"],
                  metrics=c["metrics"], jit_compile=False, run_eagerly=False)
    model.optimizer.build(model.trainable_variables)
    with h5py.File(path, "r") as f:
        g = f["optimizer_weights"]
        names = [n.decode() if isinstance(n, bytes) else n for n in g.attrs["weight_names"]]
        values = [np.asarray(g[n]) for n in names]
    assert len(values) == len(model.optimizer.variables), (len(values), names)
    for v, a in zip(model.optimizer.variables, values):
        v.assign(a)
    return model


def _continue_from(K, model, data, kw2, meta, saved_state):
    opt = model.optimizer
    state_diff = None
    if opt.variables and len(opt.variables) == len(saved_state.files):
        state_diff = max(float(np.max(np.abs(np.asarray(v.numpy()) - saved_state[k])))
                         for v, k in zip(opt.variables, saved_state.files))
    res = {"optimizer_class": type(opt).__name__,
           "optimizer_iterations_after_load": int(opt.iterations.numpy()),
           "optimizer_variables_after_load": [var_path(v) for v in opt.variables],
           "optimizer_state_max_abs_diff": state_diff}
    hist = floats(model.fit(data["x"], data["y"], **kw2).history)
    diff = history_diff(hist, meta["resume"]["history"])
    res.update(history=hist, history_max_abs_diff_vs_in_process=diff,
               matches_in_process=diff is not None and diff <= 1e-6)
    return res


def reload_and_continue(K, tf, flavour, folder):
    """Fresh process: load_model(resume.*) and continue epochs 3-4; compare with meta.resume."""
    meta = jload(os.path.join(folder, "meta.json"))
    data = {k: np.load(os.path.join(folder, f"{k}.npy")) for k in ("x", "y")}
    saved_state = np.load(os.path.join(folder, "resume_optimizer_state.npz"))
    fit2 = dict(CASES["mlp_adam"]["fit"], epochs=4, initial_epoch=2)
    kw2, _ = fit_kwargs(fit2, data, {})
    out = {}
    for f in meta["resume"]["from_files"]:
        path = os.path.join(folder, f)
        attempts = [("load_model", lambda: K.models.load_model(path))]
        if flavour == "keras3" and f.endswith(".h5"):
            attempts.append(("manual_h5_restore", lambda: _manual_h5_restore(K, path, meta)))
        for how, load in attempts:
            K.backend.clear_session()
            K.utils.set_random_seed(case_seed(meta["case"]))
            key = f if how == "load_model" else f"{f} ({how})"
            try:
                model = load()
            except Exception as e:  # noqa: BLE001
                out[key] = {"load_error": f"{type(e).__name__}: {str(e)[:300]}",
                            "matches_in_process": False}
                continue
            out[key] = _continue_from(K, model, data, kw2, meta, saved_state)
    meta["resume"]["reloaded_in_fresh_process"] = out
    jdump(os.path.join(folder, "meta.json"), meta)


# ----------------------------------------------------------------------------- tf_keras

def build_compiled_tfk(K, spec):
    model = spec["model"](K)
    model.compile(optimizer=spec["optimizer"](K), loss=spec["loss"](K), metrics=spec["metrics"],
                  jit_compile=False, run_eagerly=False)
    return model


def tfk_compile_cfg(K, model):
    """The same keys Keras 3's get_compile_config() has, from tf_keras' objects."""
    return {"optimizer": K.optimizers.serialize(model.optimizer),
            "loss": model.loss if isinstance(model.loss, str) else K.losses.serialize(model.loss),
            "loss_weights": None, "metrics": list(model.compiled_metrics._user_metrics or []),
            "weighted_metrics": None, "run_eagerly": False, "steps_per_execution": 1,
            "jit_compile": False}


# ----------------------------------------------------------------------------- roles

def summary_row(case, meta):
    h = meta["history"]
    fin = meta.get("resume", {}).get("history", h)
    opt = meta["compile"]["optimizer"]
    loss = meta["compile"]["loss"]
    return {"case": case, "writer": meta["writer"],
            "optimizer": opt["class_name"] if isinstance(opt, dict) else str(opt),
            "loss": loss if isinstance(loss, str) else loss.get("class_name"),
            "epochs": len(h["loss"]) + (len(fin["loss"]) if fin is not h else 0),
            "first_loss": h["loss"][0], "last_loss": fin["loss"][-1],
            "last_val_loss": fin.get("val_loss", [None])[-1]}


def fresh_folder(out, case):
    folder = os.path.join(out, case)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    return folder


def role_main(role, out, only):
    flavour = "keras3" if role.startswith("keras3") else "tf_keras"
    K, tf = import_keras(flavour)
    if role == "keras3":
        for case in only:
            if case == RESUME_K3:
                run_resume(K, tf, "keras3", case, fresh_folder(out, case))
            elif case in CASES:
                run_k3_case(K, tf, case, fresh_folder(out, case))
            print(f"  wrote {case}", flush=True)
    elif role == "tf_keras":
        run_resume(K, tf, "tf_keras", RESUME_TFK, fresh_folder(out, RESUME_TFK))
    elif role in ("keras3_reload", "tf_keras_reload"):
        reload_and_continue(K, tf, flavour, os.path.join(
            out, RESUME_K3 if flavour == "keras3" else RESUME_TFK))


def dir_size(p):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(p) for f in fs)


def fmt(v):
    return "-" if v is None else f"{v:.5g}"


def driver(args):
    only = args.only or ALL_CASES
    bad = [c for c in only if c not in ALL_CASES]
    if bad:
        sys.exit(f"unknown case(s): {bad}; known: {ALL_CASES}")
    os.makedirs(args.out, exist_ok=True)
    me = [sys.executable, os.path.abspath(__file__), "--out", args.out]
    steps = []
    k3 = [c for c in only if c in K3_CASES]
    if k3:
        steps.append(("keras3", k3))
    if RESUME_K3 in only:
        steps.append(("keras3_reload", []))
    if RESUME_TFK in only:
        steps += [("tf_keras", []), ("tf_keras_reload", [])]
    for role, cases in steps:
        print(f"[{role}]", flush=True)
        cmd = me + ["--role", role] + (["--only", *cases] if cases else [])
        subprocess.run(cmd, env=child_env(), check=True)
    print()
    print(f"{'case':28} {'writer':8} {'optimizer':9} {'loss':26} ep {'loss[0]':>10} "
          f"{'loss[-1]':>10} {'val[-1]':>10} {'KiB':>5}")
    total = 0
    for case in only:
        folder = os.path.join(args.out, case)
        meta = jload(os.path.join(folder, "meta.json"))
        r = summary_row(case, meta)
        size = dir_size(folder)
        total += size
        print(f"{case:28} {r['writer']:8} {r['optimizer']:9} {str(r['loss'])[:26]:26} "
              f"{r['epochs']:2d} {fmt(r['first_loss']):>10} {fmt(r['last_loss']):>10} "
              f"{fmt(r['last_val_loss']):>10} {size / 1024:5.0f}")
        for f, res in meta.get("resume", {}).get("reloaded_in_fresh_process", {}).items():
            if "load_error" in res:
                print(f"    reload {f}: LOAD FAILED {res['load_error'][:90]}")
                continue
            print(f"    reload {f}: iterations={res['optimizer_iterations_after_load']} "
                  f"state_diff={fmt(res['optimizer_state_max_abs_diff'])} "
                  f"history_diff={fmt(res['history_max_abs_diff_vs_in_process'])} "
                  f"matches={res['matches_in_process']}")
    print(f"total {total / 1024:.0f} KiB in {len(only)} case folders under {args.out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--role", default=None,
                    choices=["keras3", "keras3_reload", "tf_keras", "tf_keras_reload"])
    args = ap.parse_args()
    if args.role:
        role_main(args.role, args.out, args.only or [])
    else:
        driver(args)


if __name__ == "__main__":
    main()
