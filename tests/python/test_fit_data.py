"""fit / evaluate / predict fed by a PyDataset, a generator or a tf.data.Dataset, with steps_per_epoch,
validation_steps and validation_freq: per-epoch logs against real Keras 3 (run in its own process) from
the same weights and batches; and the errors of data that raises, has the wrong shape or ends early."""
import json
import os
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import kerascpp as keras

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SEED = os.path.join(ROOT, "tests", "fixtures", "seed_mlp_2x10", "keras3", "model.keras")  # 8 -> 10 -> 10 -> 1


def data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 8)).astype("float32")
    y = (x[:, :1] * 0.5 - x[:, 1:2] + 0.1 * rng.normal(size=(n, 1))).astype("float32")
    w = rng.uniform(0.5, 1.5, size=(n,)).astype("float32")
    return x, y, w


# The same script builds the data sources in real Keras (keras.utils.PyDataset) and in kerascpp
# (kerascpp.utils.PyDataset): `keras` is whichever module runs it.
SOURCES = r"""
import numpy as np

def make_sources(keras, x, y, w):
    class Batches(keras.utils.PyDataset):
        def __init__(self, x, y, w=None, size=16, **kwargs):
            super().__init__(**kwargs)
            self.x, self.y, self.w, self.size = x, y, w, size
        def __len__(self):
            return (len(self.x) + self.size - 1) // self.size
        def __getitem__(self, i):
            s = slice(i * self.size, (i + 1) * self.size)
            return (self.x[s], self.y[s]) if self.w is None else (self.x[s], self.y[s], self.w[s])

    def endless(x, y, size=16):  # a generator that loops over its data, as Keras asks of one
        while True:
            for i in range(0, len(x), size):
                yield x[i:i + size], y[i:i + size]

    class WarmUp(keras.optimizers.schedules.LearningRateSchedule):  # the Keras transformer guide's schedule
        def __init__(self, d_model, warmup_steps=4):
            super().__init__()
            self.d_model, self.warmup_steps = d_model, warmup_steps

        def __call__(self, step):
            step = keras.ops.cast(step, "float32") + 1.0
            arg2 = step * (self.warmup_steps ** -1.5)
            return keras.ops.rsqrt(keras.ops.cast(self.d_model, "float32")) * keras.ops.minimum(keras.ops.rsqrt(step), arg2)

        def get_config(self):
            return {"d_model": self.d_model, "warmup_steps": self.warmup_steps}

    Batches.WarmUp = WarmUp
    return Batches, endless

import os
RUNS = {}

def run_all(keras, seed_path, x, y, w, work, tf=None):
    Batches, endless = make_sources(keras, x, y, w)
    def fresh(lr=0.01):
        m = keras.models.load_model(seed_path, compile=False)
        m.compile(optimizer=keras.optimizers.SGD(lr), loss="mse", metrics=["mae"])
        return m
    def record(name, m, h):
        RUNS[name] = {"history": {k: [float(a) for a in v] for k, v in h.history.items()},
                      "weights": [a.tolist() for a in m.get_weights()]}
    m = fresh()
    record("py_dataset", m, m.fit(Batches(x, y, w), epochs=3, shuffle=False, verbose=0,
                                  validation_data=Batches(x[:16], y[:16])))
    RUNS["py_dataset"]["evaluate"] = [float(a) for a in m.evaluate(Batches(x, y), verbose=0)]
    RUNS["py_dataset"]["predict"] = m.predict(Batches(x[:40], y[:40], size=16), verbose=0).tolist()
    m = fresh()
    # One validation batch over and over: Keras on TensorFlow reads a generator through tf.data with
    # prefetching, so which batch a new validation pass starts with depends on how far it read ahead.
    record("generator", m, m.fit(endless(x, y), steps_per_epoch=3, epochs=3, verbose=0,
                                 validation_data=endless(x[:16], y[:16]), validation_steps=1))
    m = fresh()
    record("steps_go_on", m, m.fit(Batches(x, y), steps_per_epoch=3, epochs=3, shuffle=False, verbose=0))
    m = fresh()
    record("workers", m, m.fit(Batches(x, y, workers=3, max_queue_size=2), epochs=2, shuffle=False, verbose=0))
    m = keras.models.load_model(seed_path, compile=False)
    m.compile(optimizer=keras.optimizers.Adam(Batches.WarmUp(8)), loss="mse")
    record("python_schedule", m, m.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0))
    # An interrupted fit resumed by BackupAndRestore: the weights, Adam's state and the epoch come back.
    class PowerCut(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                raise RuntimeError("power cut")

    def adam():
        m = keras.models.load_model(seed_path, compile=False)
        m.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
        return m
    backup = os.path.join(work, keras.__name__ + "_backup")
    try:
        adam().fit(x, y, batch_size=16, epochs=4, shuffle=False, verbose=0,
                   callbacks=[keras.callbacks.BackupAndRestore(backup), PowerCut()])
    except RuntimeError:
        pass
    m = adam()
    h = m.fit(x, y, batch_size=16, epochs=4, shuffle=False, verbose=0,
              callbacks=[keras.callbacks.BackupAndRestore(backup)])
    record("resumed", m, h)
    RUNS["resumed"]["epochs"] = list(h.epoch)
    RUNS["resumed"]["backup_left"] = os.path.exists(backup)
    m = adam()
    record("uninterrupted", m, m.fit(x, y, batch_size=16, epochs=4, shuffle=False, verbose=0))
    # The cosine-similarity loss trains (its gradient), with the new metrics beside it.
    m = keras.Sequential([keras.Input((8,)), keras.layers.Dense(3)])
    m.set_weights([np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3), np.zeros(3, "float32")])
    m.compile(optimizer=keras.optimizers.SGD(0.5), loss="cosine_similarity",
              metrics=["cosine_similarity", "r2_score", keras.metrics.TruePositives(thresholds=0.2)])
    y3 = np.stack([x[:, 0] - x[:, 1], x[:, 2], 0.5 * x[:, 3]], axis=1)
    record("cosine_loss", m, m.fit(x, y3, batch_size=16, epochs=3, shuffle=False, verbose=0))
    m = keras.Sequential([keras.Input((8,)), keras.layers.Dense(3)])
    m.set_weights([np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3), np.zeros(3, "float32")])
    m.compile(optimizer=keras.optimizers.SGD(0.5), loss=keras.losses.CategoricalFocalCrossentropy(from_logits=True),
              metrics=["categorical_accuracy"])
    onehot = np.eye(3, dtype="float32")[np.argmax(y3, axis=1)]
    record("categorical_focal_loss", m, m.fit(x, onehot, batch_size=16, epochs=3, shuffle=False, verbose=0))
    m = keras.models.load_model(seed_path, compile=False)  # its linear output as the logit
    m.compile(optimizer=keras.optimizers.SGD(0.1), loss=keras.losses.BinaryFocalCrossentropy(
        from_logits=True, apply_class_balancing=True, gamma=1.5))
    record("focal_loss", m, m.fit(x, (y > 0).astype("float32"), batch_size=16, epochs=3, shuffle=False, verbose=0))
    m = keras.Sequential([keras.Input((8,)), keras.layers.Dense(3, activation="sigmoid")])
    m.set_weights([np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3), np.zeros(3, "float32")])
    m.compile(optimizer=keras.optimizers.Adam(0.05), loss=keras.losses.Dice(), metrics=["binary_accuracy"])
    labels = (y3 > 0).astype("float32")
    record("dice_loss", m, m.fit(x, labels, batch_size=16, epochs=3, shuffle=False, verbose=0))
    m = keras.Sequential([keras.Input((8,)), keras.layers.Dense(3, activation="sigmoid")])
    m.set_weights([np.linspace(1, -1, 24, dtype="float32").reshape(8, 3), np.zeros(3, "float32")])
    m.compile(optimizer=keras.optimizers.Adam(0.05), loss=keras.losses.Tversky(alpha=0.7, beta=0.3, axis=-1))
    record("tversky_loss", m, m.fit(x, labels, sample_weight=w, batch_size=16, epochs=3, shuffle=False, verbose=0))
    # Weights averaged by the optimizer (they become the averages when fit ends), and gradients summed
    # over 3 batches before each step.
    m = keras.models.load_model(seed_path, compile=False)
    m.compile(optimizer=keras.optimizers.Adam(0.02, use_ema=True, ema_momentum=0.9), loss="mse")
    record("ema", m, m.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0))
    m = keras.models.load_model(seed_path, compile=False)
    m.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.5, gradient_accumulation_steps=3), loss="mse")
    record("accumulate", m, m.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0))
    RUNS["accumulate"]["iterations"] = int(np.asarray(m.optimizer.iterations))
    m = fresh()
    checkpoints = os.path.join(work, keras.__name__)
    m.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0, callbacks=[keras.callbacks.ModelCheckpoint(
        os.path.join(checkpoints, "{epoch}-{batch}.weights.h5"), save_weights_only=True, save_freq=3)])
    RUNS["checkpoints"] = sorted(os.listdir(checkpoints))
    m = fresh()
    keras.utils.set_random_seed(7)
    record("shuffled", m, m.fit(Batches(x, y), epochs=2, shuffle=True, verbose=0))
    if tf is not None:
        m = fresh()
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
        record("tf_data", m, m.fit(ds, epochs=3, verbose=0, validation_data=ds.take(1), validation_freq=[1, 3]))
        RUNS["tf_data"]["evaluate"] = [float(a) for a in m.evaluate(ds, steps=2, verbose=0)]
    return RUNS
"""

KERAS_REFERENCE = SOURCES + r"""
import json, sys
import keras, tensorflow as tf
d = np.load(sys.argv[2])
print("RESULT" + json.dumps(run_all(keras, sys.argv[1], d["x"], d["y"], d["w"], sys.argv[3], tf)))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    x, y, w = data()
    path = tmp_path_factory.mktemp("ref") / "data.npz"
    np.savez(path, x=x, y=y, w=w)
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    work = tmp_path_factory.mktemp("work")
    r = subprocess.run([sys.executable, "-c", KERAS_REFERENCE, SEED, str(path), str(work)], capture_output=True,
                       text=True, env=env)
    line = [l for l in r.stdout.splitlines() if l.startswith("RESULT")]
    if not line:  # Keras and TensorFlow are pinned test dependencies: their absence is a failure
        pytest.fail("real Keras did not run: " + r.stderr[-800:])
    scope = {}
    exec(SOURCES, scope)
    try:
        import tensorflow as tf
    except ImportError:
        tf = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generator's validation runs out where Keras's does too
        mine = scope["run_all"](keras, SEED, x, y, w, str(work), tf)
    return json.loads(line[0][len("RESULT"):]), mine


@pytest.mark.parametrize("name", ["py_dataset", "generator", "steps_go_on", "workers", "shuffled", "tf_data",
                                  "python_schedule", "resumed", "uninterrupted", "cosine_loss", "focal_loss",
                                  "categorical_focal_loss", "dice_loss", "tversky_loss", "ema", "accumulate"])
def test_fit_on_data_sources_matches_real_keras(runs, name):
    ref, mine = runs[0][name], runs[1][name]
    assert set(mine["history"]) == set(ref["history"])
    for key, values in ref["history"].items():  # float32 sums in another order: 1e-4 relative
        np.testing.assert_allclose(mine["history"][key], values, rtol=1e-4, err_msg=key)
    for got, want in zip(mine["weights"], ref["weights"]):
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-4, atol=1e-5)
    assert mine.get("iterations") == ref.get("iterations")
    for key in ("evaluate", "predict"):
        if key in ref:
            np.testing.assert_allclose(np.array(mine[key]), np.array(ref[key]), rtol=1e-4, atol=1e-6, err_msg=key)


def fresh():
    m = keras.models.load_model(SEED, compile=False)
    m.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    return m


class Flaky(keras.utils.PyDataset):
    """Batches of 16; batch `bad` raises, or has the wrong width with bad_shape."""

    def __init__(self, bad, bad_shape=False):
        super().__init__()
        self.x, self.y, _ = data()
        self.bad, self.bad_shape = bad, bad_shape

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == self.bad:
            if not self.bad_shape:
                raise KeyError(f"no batch {i}")
            return self.x[:16, :5], self.y[:16]
        return self.x[i * 16:(i + 1) * 16], self.y[i * 16:(i + 1) * 16]


class Weights(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        self.last = self.model.get_weights()


def test_backup_and_restore_resumes_where_training_stopped(runs):
    resumed, whole = runs[1]["resumed"], runs[1]["uninterrupted"]
    assert resumed["epochs"] == runs[0]["resumed"]["epochs"] == [2, 3]
    assert not resumed["backup_left"]  # deleted once fit ends normally
    # The resumed run ends where the uninterrupted one does: Adam's moments came back with the weights.
    np.testing.assert_allclose(resumed["history"]["loss"], whole["history"]["loss"][2:], rtol=1e-5)
    for got, want in zip(resumed["weights"], whole["weights"]):
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-7)


def test_model_checkpoint_every_n_batches_names_files_as_keras(runs):
    # Every 3 batches counted across epochs of 4 batches: epoch 1 batch 3, epoch 2 batch 2, epoch 3
    # batches 1 and 4.
    assert len(runs[1]["checkpoints"]) == 4
    assert runs[1]["checkpoints"] == runs[0]["checkpoints"]


def test_data_that_raises_names_the_batch_and_keeps_the_weights():
    m, seen = fresh(), Weights()
    with pytest.raises(KeyError, match="no batch 2") as e:
        m.fit(Flaky(2), epochs=1, shuffle=False, verbose=0, callbacks=[seen])
    assert any("batch 2 of this pass" in n and "Flaky[2]" in n for n in e.value.__notes__)
    for a, b in zip(m.get_weights(), seen.last):  # trained on batches 0 and 1 only
        np.testing.assert_array_equal(a, b)


def test_a_batch_of_the_wrong_shape_names_the_batch_and_keeps_the_weights():
    m, seen = fresh(), Weights()
    with pytest.raises(ValueError, match=r"fit, epoch 1, batch 1: .*weights are as they were") as e:
        m.fit(Flaky(1, bad_shape=True), epochs=1, shuffle=False, verbose=0, callbacks=[seen])
    assert "8" in str(e.value) and "5" in str(e.value)
    for a, b in zip(m.get_weights(), seen.last):
        np.testing.assert_array_equal(a, b)


def test_a_generator_that_ends_early_stops_training_with_keras_warning():
    x, y, _ = data()
    m = fresh()
    gen = ((x[i:i + 16], y[i:i + 16]) for i in range(0, 48, 16))  # 3 batches in all
    with pytest.warns(UserWarning, match="ran out of data"):
        h = m.fit(gen, steps_per_epoch=2, epochs=5, verbose=0)
    assert h.epoch == [0, 1]  # 2 + 1 batches; the third epoch has none, so training stops
    with pytest.raises(ValueError, match="empty generator"):
        m.fit((b for b in []), epochs=1, verbose=0)


def test_errors_are_keras_like():
    x, y, w = data()
    m = fresh()
    with pytest.raises(ValueError, match="When providing `x` as a PyDataset, `y` should not be passed"):
        m.fit(Flaky(9), y, verbose=0)
    with pytest.raises(ValueError, match="`validation_split` is only supported"):
        m.fit(Flaky(9), validation_split=0.5, verbose=0)
    with pytest.raises(ValueError, match="validation_freq"):
        m.fit(x, y, validation_freq=0, verbose=0)
    with pytest.raises(ValueError, match="class_weight` is not supported for Python generator"):
        m.fit(iter([(x[:8], y[:8])]), class_weight={0: 1.0}, verbose=0)

    class Weighted(keras.utils.PyDataset):
        def __len__(self):
            return 1

        def __getitem__(self, i):
            return x[:8], y[:8], w[:8]

    with pytest.raises(ValueError, match="fit, epoch 1, batch 0: You cannot specify `class_weight` and `sample_weight"):
        m.fit(Weighted(), class_weight={0: 1.0}, verbose=0)


def test_arrays_take_steps_too():
    x, y, _ = data()
    m = fresh()
    h = m.fit(x, y, batch_size=16, steps_per_epoch=3, epochs=2, shuffle=False, verbose=0)
    assert h.params["steps"] == 3
    assert np.isfinite(m.evaluate(x, y, batch_size=16, steps=2, verbose=0))
    assert m.predict(x, batch_size=16, steps=2, verbose=0).shape == (32, 1)
    # Without batch_size, Keras sizes batches to cover the samples in `steps` batches.
    seen = []

    class Sizes(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append(batch)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "ran out of data": 4 batches of 16
        m.fit(x, y, steps_per_epoch=4, epochs=1, shuffle=False, verbose=0, callbacks=[Sizes()])
    assert seen == [0, 1, 2, 3]
    assert m.predict(x[:50], steps=2, verbose=0).shape == (50, 1)


def test_a_deferred_sequential_builds_from_a_generator_without_losing_a_batch():
    x, y, _ = data()
    model = keras.Sequential([keras.layers.Dense(4, activation="relu"), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    seen = []

    class Count(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append(batch)

    model.fit(((x[i:i + 16], y[i:i + 16]) for i in range(0, 64, 16)), epochs=1, verbose=0, callbacks=[Count()])
    assert seen == [0, 1, 2, 3]


def test_reading_overlaps_training():
    # The source is read on the engine's input thread while the engine trains without the GIL: the
    # reads happen on another thread than fit's, one batch ahead.
    x, y, _ = data()
    threads = set()

    class Where(keras.utils.PyDataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            threads.add(threading.get_ident())
            time.sleep(0.001)
            return x[i * 16:(i + 1) * 16], y[i * 16:(i + 1) * 16]

    fresh().fit(Where(), epochs=2, verbose=0)
    assert threads and threading.get_ident() not in threads
