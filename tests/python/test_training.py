"""Training from Python: the classic Keras snippets run unchanged but for the import, and kerascpp's
losses per epoch match real Keras's (run in its own process) from the same weights and batches."""
import csv
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import kerascpp as keras
from kerascpp import backend as K

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SEED = os.path.join(ROOT, "tests", "fixtures", "seed_mlp_2x10", "keras3", "model.keras")  # 8 -> 10 -> 10 -> 1


def data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 8)).astype("float32")
    y = (x[:, :1] * 0.5 - x[:, 1:2] + 0.1 * rng.normal(size=(n, 1))).astype("float32")
    return x, y


def fresh():
    return keras.models.load_model(SEED, compile=False)


class MyCallback(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.weights, self.lrs, self.batches = [], [], 0

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append(self.model.get_weights())

    def on_batch_end(self, batch, logs=None):
        self.batches += 1
        self.lrs.append(float(K.get_value(self.model.optimizer.learning_rate)))


def test_classic_snippet():
    x, y = data()
    model = keras.models.load_model(SEED)
    model.compile(optimizer="adam", loss="mse")
    mine = MyCallback()
    history = model.fit(x, y, epochs=3, batch_size=16, validation_split=0.2, verbose=0,
                        callbacks=[keras.callbacks.EarlyStopping(patience=2, restore_best_weights=True), mine])
    assert isinstance(history, keras.callbacks.History) and model.history is history
    assert set(history.history) == {"loss", "val_loss"}
    assert history.epoch == [0, 1, 2]
    assert all(len(v) == 3 and all(math.isfinite(a) for a in v) for v in history.history.values())
    assert len(mine.weights) == 3 and [w.shape for w in mine.weights[0]] == [w.shape for w in model.get_weights()]
    assert mine.batches == 3 * math.ceil(51 / 16)  # 64 - int(64 * 0.2) training samples
    assert mine.lrs == pytest.approx([0.001] * mine.batches)
    assert history.params == {"verbose": 0, "epochs": 3, "steps": 4}
    # The weights changed, and the first epoch's differ from the last's.
    assert any(not np.array_equal(a, b) for a, b in zip(mine.weights[0], mine.weights[-1]))


def test_history_keys_with_metrics_and_validation_data():
    x, y = data()
    model = fresh()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss=keras.losses.MeanSquaredError(),
                  metrics=["mae", keras.metrics.RootMeanSquaredError(name="rmse")])
    assert model.compiled
    history = model.fit(x[:48], y[:48], batch_size=16, epochs=2, validation_data=(x[48:], y[48:]), verbose=0)
    assert set(history.history) == {"loss", "mae", "rmse", "val_loss", "val_mae", "val_rmse"}
    assert history.epoch == [0, 1]
    # Keras logs the epoch's mean; the loss falls on this easy problem with a small step.
    assert history.history["loss"][1] < history.history["loss"][0]


def test_evaluate_lists_loss_then_metrics_in_compile_order():
    # Keras 3's _flatten_metrics_in_order, though the logs themselves are sorted by key.
    x, y = data()
    model = fresh()
    model.compile(optimizer="sgd", loss="mse", metrics=["mse", "accuracy"])
    d = model.evaluate(x, y, verbose=0, return_dict=True)
    assert list(d) == ["accuracy", "loss", "mse"]
    assert model.evaluate(x, y, verbose=0) == [d["loss"], d["mse"], d["accuracy"]]


def test_evaluate_and_batch_return_forms():
    x, y = data()
    model = fresh()
    model.compile(optimizer="sgd", loss="mse")
    loss = model.evaluate(x, y, verbose=0)
    assert isinstance(loss, float)
    assert loss == pytest.approx(float(np.mean((model.predict(x, verbose=0) - y) ** 2)), rel=1e-5)
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    both = model.evaluate(x, y, batch_size=10, verbose=0)
    assert isinstance(both, list) and len(both) == 2 and both[0] == pytest.approx(loss, rel=1e-5)
    d = model.evaluate(x, y, verbose=0, return_dict=True)
    assert list(d) == ["loss", "mae"] and d["loss"] == pytest.approx(loss, rel=1e-5)
    assert model.metrics_names == ["loss", "mae"]
    t = model.test_on_batch(x[:16], y[:16], return_dict=True)
    assert set(t) == {"loss", "mae"}
    before = model.get_weights()
    r = model.train_on_batch(x[:16], y[:16])
    assert isinstance(r, list) and len(r) == 2 and r[0] == pytest.approx(t["loss"], rel=1e-5)
    assert any(not np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
    assert model.optimizer.iterations.numpy() == 1
    np.testing.assert_allclose(model.predict_on_batch(x[:5]), model.predict(x[:5], verbose=0), atol=1e-6)


def test_progbar_logger_given_is_the_one_bar(capfd):
    # Keras adds no progress bar of its own when the callbacks hold one; verbose=2 prints a line per epoch.
    x, y = data()
    model = fresh()
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, epochs=2, verbose=2, callbacks=[keras.callbacks.ProgbarLogger()])
    out = capfd.readouterr().out
    assert out.count("Epoch 1/2") == 1 and out.count("Epoch 2/2") == 1 and "loss:" in out
    model.fit(x, y, epochs=2, verbose=0, callbacks=[keras.callbacks.ProgbarLogger()])
    assert capfd.readouterr().out == ""


def test_python_callback_stops_training_and_writes_logs():
    class Stopper(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.seen_params = dict(self.params)

        def on_epoch_end(self, epoch, logs=None):
            logs["twice_loss"] = 2 * logs["loss"]
            if epoch == 1:
                self.model.stop_training = True

    x, y = data()
    model = fresh()
    model.compile(optimizer="sgd", loss="mse")
    cb = Stopper()
    history = model.fit(x, y, epochs=10, batch_size=32, verbose=0, callbacks=[cb])
    assert history.epoch == [0, 1]
    assert cb.seen_params == {"verbose": 0, "epochs": 10, "steps": 2}
    np.testing.assert_allclose(history.history["twice_loss"], 2 * np.array(history.history["loss"]), rtol=1e-6)


def test_lambda_scheduler_and_builtin_subclass():
    seen = []

    class LoudStopping(keras.callbacks.EarlyStopping):
        def on_epoch_end(self, epoch, logs=None):
            seen.append(("stop", epoch))
            super().on_epoch_end(epoch, logs)

    x, y = data()
    model = fresh()
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    history = model.fit(x, y, epochs=3, verbose=0, callbacks=[
        keras.callbacks.LearningRateScheduler(lambda epoch: 0.1 * 0.5 ** epoch),
        keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(("lambda", epoch))),
        LoudStopping(monitor="loss", patience=5)])
    assert history.history["learning_rate"] == pytest.approx([0.1, 0.05, 0.025])
    assert float(model.optimizer.learning_rate) == pytest.approx(0.025)
    assert sorted(seen) == sorted([("stop", e) for e in range(3)] + [("lambda", e) for e in range(3)])


def test_file_callbacks(tmp_path):
    x, y = data()
    model = fresh()
    model.compile(optimizer="adam", loss="mse")
    best = tmp_path / "best.keras"
    log = tmp_path / "log.csv"
    hist = tmp_path / "weights.h5"
    ckpt = keras.callbacks.ModelCheckpoint(best, monitor="val_loss", save_best_only=True)
    model.fit(x, y, epochs=3, batch_size=16, validation_split=0.25, verbose=0,
              callbacks=[ckpt, keras.callbacks.CSVLogger(str(log)), keras.callbacks.WeightHistory(str(hist))])
    assert keras.models.load_model(best).predict(x[:2], verbose=0).shape == (2, 1)
    assert math.isfinite(ckpt.best)
    with open(log) as f:
        rows = list(csv.DictReader(f))
    assert [int(r["epoch"]) for r in rows] == [0, 1, 2] and set(rows[0]) == {"epoch", "loss", "val_loss"}
    import h5py
    with h5py.File(hist, "r") as f:
        assert list(f["epoch"][:]) == [0, 1, 2]
        shapes = []
        f.visititems(lambda n, o: shapes.append(o.shape) if isinstance(o, h5py.Dataset) and n != "epoch" else None)
        assert sorted(shapes) == sorted((3,) + w.shape for w in model.get_weights())


def test_terminate_on_nan_and_reduce_lr():
    x, y = data()
    model = fresh()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=1e12), loss="mse")
    history = model.fit(x * 1e6, y, epochs=5, batch_size=8, verbose=0, callbacks=[keras.callbacks.TerminateOnNaN()])
    assert len(history.epoch) <= 1
    model = fresh()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.05), loss="mse")
    model.fit(x, y, epochs=3, verbose=0, callbacks=[
        keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=0, min_delta=1e9)])
    # Epoch 0 improves on inf; epochs 1 and 2 do not improve by min_delta: two reductions, as Keras.
    assert float(model.optimizer.learning_rate) == pytest.approx(0.05 * 0.5 ** 2)


def test_errors_are_keras_like():
    x, y = data()
    model = fresh()
    with pytest.raises(ValueError):
        model.fit(x, y, verbose=0)  # not compiled
    with pytest.raises(ValueError, match="nope"):
        model.compile(optimizer="nope", loss="mse")
    with pytest.raises(ValueError, match="nope"):
        model.compile(optimizer="adam", loss="nope")
    with pytest.raises(ValueError, match="nope"):  # at compile in kerascpp, at the first fit in Keras
        model.compile(optimizer="adam", loss="mse", metrics=["nope"])
        model.fit(x, y, verbose=0)
    model.compile(optimizer="adam", loss="mse")
    with pytest.raises(ValueError):
        model.fit(x, y[:50], verbose=0)
    with pytest.raises(NotImplementedError, match="Python loss"):
        model.compile(optimizer="adam", loss=lambda yt, yp: ((yt - yp) ** 2).mean())

    class Broken(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            raise ValueError("broken callback")

    with pytest.raises(ValueError, match="broken callback"):
        model.fit(x, y, verbose=0, callbacks=[Broken()])
    with pytest.raises(ValueError, match="Argument"):
        keras.optimizers.Adam(learning_rate=0.1, bogus=1)


def test_optimizer_objects():
    opt = keras.optimizers.Adam(learning_rate=0.01, beta_1=0.8)
    config = opt.get_config()
    assert config["learning_rate"] == pytest.approx(0.01) and config["beta_1"] == pytest.approx(0.8)
    sgd = keras.optimizers.SGD(0.1, 0.9)
    assert sgd.get_config()["momentum"] == pytest.approx(0.9)
    schedule = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    assert schedule(10) == pytest.approx(0.05)
    with_schedule = keras.optimizers.RMSprop(learning_rate=schedule).get_config()["learning_rate"]
    assert with_schedule["class_name"] == "ExponentialDecay" and with_schedule["config"]["decay_steps"] == 10
    assert isinstance(keras.optimizers.get("adamw"), keras.optimizers.AdamW)

    model = fresh()
    model.compile(optimizer=opt, loss="mse")
    assert model.optimizer is opt
    K.set_value(model.optimizer.learning_rate, 0.5)
    assert model.optimizer.get_config()["learning_rate"] == pytest.approx(0.5)
    model.optimizer.learning_rate = 0.25
    assert K.get_value(model.optimizer.lr) == pytest.approx(0.25)
    model.compile(optimizer="nadam", loss="mse")
    assert isinstance(model.optimizer, keras.optimizers.Nadam)


def test_losses_and_metrics_standalone():
    rng = np.random.default_rng(1)
    yt = rng.normal(size=(6, 3)).astype("float32")
    yp = rng.normal(size=(6, 3)).astype("float32")
    assert float(keras.losses.MeanSquaredError()(yt, yp)) == pytest.approx(np.mean((yt - yp) ** 2), rel=1e-5)
    np.testing.assert_allclose(keras.losses.mse(yt, yp), np.mean((yt - yp) ** 2, axis=-1), rtol=1e-5)
    sw = np.array([1, 0, 1, 0, 1, 0], "float32")
    per = np.mean((yt - yp) ** 2, axis=-1)
    assert float(keras.losses.MeanSquaredError()(yt, yp, sample_weight=sw)) == pytest.approx(np.sum(per * sw) / 6,
                                                                                           rel=1e-5)
    labels = np.eye(3, dtype="float32")[[0, 2, 1, 1, 0, 2]]
    smooth = labels * 0.9 + 0.1 / 3
    logp = yp - np.log(np.sum(np.exp(yp), axis=-1, keepdims=True))
    cce = keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)
    assert float(cce(labels, yp)) == pytest.approx(np.mean(-np.sum(smooth * logp, axis=-1)), rel=1e-5)
    assert cce.get_config()["label_smoothing"] == pytest.approx(0.1)
    with pytest.raises(ValueError, match="nope"):
        keras.losses.get("nope")

    acc = keras.metrics.BinaryAccuracy()
    acc.update_state([[1], [0], [1], [1]], [[0.9], [0.2], [0.4], [0.6]])
    assert float(acc.result()) == pytest.approx(0.75)
    acc.reset_state()
    acc.update_state([[1]], [[0.9]])
    assert float(acc.result()) == pytest.approx(1.0)
    mae = keras.metrics.MeanAbsoluteError()
    assert float(mae(yt, yp)) == pytest.approx(np.mean(np.abs(yt - yp)), rel=1e-5)
    with pytest.raises(ValueError, match="nope"):
        keras.metrics.get("nope")


KERAS_REFERENCE = r"""
import json, sys
import numpy as np
import keras
out = {}
d = np.load(sys.argv[2])
x, y = d["x"], d["y"]
for name, opt in [("sgd", keras.optimizers.SGD(0.01)), ("adam", keras.optimizers.Adam(0.01))]:
    m = keras.models.load_model(sys.argv[1], compile=False)
    m.compile(optimizer=opt, loss="mse", metrics=["mae"])
    h = m.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0, validation_data=(x[:16], y[:16]))
    out[name] = {"history": {k: [float(a) for a in v] for k, v in h.history.items()},
                 "evaluate": [float(a) for a in m.evaluate(x, y, batch_size=16, verbose=0)],
                 "weights": [w.tolist() for w in m.get_weights()]}
print("RESULT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def keras_reference(tmp_path_factory):
    x, y = data()
    path = tmp_path_factory.mktemp("ref") / "data.npz"
    np.savez(path, x=x, y=y)
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, "-c", KERAS_REFERENCE, SEED, str(path)], capture_output=True, text=True,
                       env=env)
    line = [l for l in r.stdout.splitlines() if l.startswith("RESULT")]
    if not line:
        pytest.skip("real Keras did not run: " + r.stderr[-500:])
    return json.loads(line[0][len("RESULT"):])


@pytest.mark.parametrize("name,optimizer", [("sgd", lambda: keras.optimizers.SGD(0.01)),
                                            ("adam", lambda: keras.optimizers.Adam(0.01))])
def test_fit_matches_real_keras(keras_reference, name, optimizer):
    ref = keras_reference[name]
    x, y = data()
    model = fresh()
    model.compile(optimizer=optimizer(), loss="mse", metrics=["mae"])
    history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0, validation_data=(x[:16], y[:16]))
    assert set(history.history) == set(ref["history"])
    for key, values in ref["history"].items():
        np.testing.assert_allclose(history.history[key], values, rtol=1e-4, err_msg=key)
    np.testing.assert_allclose(model.evaluate(x, y, batch_size=16, verbose=0), ref["evaluate"], rtol=1e-4)
    for got, want in zip(model.get_weights(), ref["weights"]):
        np.testing.assert_allclose(got, np.array(want, "float32"), rtol=1e-4, atol=1e-5)


def test_engine_warnings_are_python_warnings():
    # kerascpp::warn (here EarlyStopping's missing metric, as Keras words it) reaches the warnings
    # module: pytest.warns sees it, and a filter set to "error" raises it from fit.
    x, y = data()
    model = fresh()
    model.compile(optimizer="sgd", loss="mse")
    with pytest.warns(UserWarning, match="Early stopping conditioned on metric `val_nope`"):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[keras.callbacks.EarlyStopping(monitor="val_nope", mode="min")])
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="val_nope"):
            model.fit(x, y, epochs=1, verbose=0, callbacks=[keras.callbacks.EarlyStopping(monitor="val_nope", mode="min")])


def test_a_stateful_model_trains_as_keras_does():
    """fit carries the stateful layers' states from batch to batch, through validation and on into
    evaluate, as Keras does (the Keras-written fixture tests/fixtures/training/seq_stateful)."""
    d = os.path.join(ROOT, "tests", "fixtures", "training", "seq_stateful")
    meta = json.load(open(os.path.join(d, "meta.json")))
    model = keras.models.load_model(os.path.join(d, "model.keras"))
    x, y = np.load(os.path.join(d, "x.npy")), np.load(os.path.join(d, "y.npy"))
    fit = meta["fit"]
    history = model.fit(x, y, batch_size=fit["batch_size"], epochs=fit["epochs"], shuffle=False, verbose=0,
                        validation_split=fit["validation_split"])
    for key, values in meta["history"].items():
        np.testing.assert_allclose(history.history[key], values, rtol=1e-4, atol=1e-4, err_msg=key)
    logs = model.evaluate(x, y, batch_size=fit["batch_size"], verbose=0, return_dict=True)
    for key, value in meta["evaluate"].items():
        np.testing.assert_allclose(logs[key], value, rtol=1e-4, atol=1e-4, err_msg=key)
    with pytest.raises(ValueError, match="needs batch_size=8 and whole batches of it. Received: batch_size=8 and 12"):
        model.fit(x[:12], y[:12], batch_size=8, verbose=0)
    with pytest.raises(ValueError, match="Received: batch_size=32 and 64 samples"):
        model.fit(x, y, verbose=0)  # Keras's default batch_size


TF_KERAS_MHA = r"""
import json, sys
import numpy as np
import tf_keras as K
L = K.layers
x = K.Input((6, 4))
a = L.MultiHeadAttention(num_heads=2, key_dim=3, activity_regularizer=K.regularizers.L2(0.05), name="mha")(x, x)
m = K.Model(x, L.Dense(1, name="out")(L.Flatten()(a)))
rng = np.random.default_rng(7)
m.set_weights([rng.normal(size=w.shape).astype("float32") * 0.5 for w in m.get_weights()])
m.compile(optimizer="sgd", loss="mse")
data = np.load(sys.argv[2])
m.save(sys.argv[1])
print("RESULT" + json.dumps({"loss": float(m.evaluate(data["x"], data["y"], batch_size=8, verbose=0))}))
"""


def test_tf_keras_multi_head_attention_penalises_its_own_output(tmp_path):
    """tf_keras's MultiHeadAttention applies its activity_regularizer to its own output only (its
    projections drop it); Keras 3's to every projection only (the seq_attention_activity fit fixture)."""
    rng = np.random.default_rng(3)
    path = tmp_path / "data.npz"
    np.savez(path, x=rng.normal(size=(16, 6, 4)).astype("float32"), y=rng.normal(size=(16, 1)).astype("float32"))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, "-c", TF_KERAS_MHA, str(tmp_path / "mha.h5"), str(path)], capture_output=True,
                       text=True, env=env)
    line = [l for l in r.stdout.splitlines() if l.startswith("RESULT")]
    assert line, "tf_keras (a test dependency) did not run: " + r.stderr[-500:]
    want = json.loads(line[0][len("RESULT"):])["loss"]
    model = keras.models.load_model(str(tmp_path / "mha.h5"))
    d = np.load(path)
    got = model.evaluate(d["x"], d["y"], batch_size=8, verbose=0)
    np.testing.assert_allclose(got, want, rtol=1e-4)
