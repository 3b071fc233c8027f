"""A Keras 3 file compiled with a user's Python loss function, Loss subclass, metric function,
Metric subclass and LearningRateSchedule subclass resumes training in kerascpp:
load_model(custom_objects=...) compiles it from its compile config with the user's objects (traced or
run in Python as compile() does) and restores the optimizer state, so the next epochs equal real
Keras's own continuation of the same file; and the entries that cannot be made are named."""
import json
import zipfile

import numpy as np
import pytest

import keras_reference
import kerascpp as keras

OBJECTS = r"""
import numpy as np

def objects(keras):
    def soft_huber(y_true, y_pred):
        e = keras.ops.abs(y_true - y_pred)
        return keras.ops.mean(keras.ops.where(e < 0.5, 0.5 * keras.ops.square(e), 0.5 * e - 0.125), axis=-1)

    def worst_error(y_true, y_pred):
        return keras.ops.max(keras.ops.abs(y_true - y_pred), axis=-1)

    class ScaledSquares(keras.losses.Loss):
        def __init__(self, scale=1.0, **kwargs):
            super().__init__(**kwargs)
            self.scale = scale

        def call(self, y_true, y_pred):
            return self.scale * keras.ops.mean(keras.ops.square(y_true - y_pred), axis=-1)

        def get_config(self):
            return {**super().get_config(), "scale": self.scale}

    class LargestError(keras.metrics.Metric):
        def __init__(self, name="largest_error", **kwargs):
            super().__init__(name=name, **kwargs)
            self.largest = self.add_variable(shape=(), initializer="zeros", name="largest")

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.largest.assign(keras.ops.maximum(self.largest, keras.ops.max(keras.ops.abs(y_true - y_pred))))

        def result(self):
            return self.largest

    def dice(y_true, y_pred):  # the user's own "dice": Keras takes custom_objects before its built-in
        return keras.ops.mean(keras.ops.abs(y_true - y_pred) ** 1.5, axis=-1)

    class Warmup(keras.optimizers.schedules.LearningRateSchedule):  # the transformer guide's
        def __init__(self, d_model=16, warmup_steps=4):
            self.d_model, self.warmup_steps = d_model, warmup_steps

        def __call__(self, step):
            step = keras.ops.cast(step, "float32") + 1.0
            return keras.ops.minimum(keras.ops.rsqrt(step), step * self.warmup_steps ** -1.5) * self.d_model ** -0.5

        def get_config(self):
            return {"d_model": self.d_model, "warmup_steps": self.warmup_steps}

    return {"soft_huber": soft_huber, "worst_error": worst_error, "ScaledSquares": ScaledSquares,
            "LargestError": LargestError, "dice": dice, "Warmup": Warmup}

def data():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(40, 5)).astype("float32")
    y = np.stack([x[:, 0] - x[:, 1], 0.5 * x[:, 2]], axis=1).astype("float32")
    return x, y

def continue_training(keras, path):
    x, y = data()
    model = keras.models.load_model(path, custom_objects=objects(keras))
    if len(model.outputs) == 2:
        y = [y[:, :1], y]
    h = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    return {k: [float(v) for v in vs] for k, vs in h.history.items()}
"""

KERAS_REFERENCE = OBJECTS + r"""
import json, sys
import keras

def save(keras, loss, path):
    objs = objects(keras)
    x, y = data()
    inp = keras.Input((5,))
    h = keras.layers.Dense(6, activation="tanh")(inp)
    model = keras.Model(inp, keras.layers.Dense(2)(h))
    r = np.random.default_rng(2)
    model.set_weights([r.normal(scale=0.5, size=v.shape).astype("float32") for v in model.get_weights()])
    optimizer = keras.optimizers.Adam(objs["Warmup"](16, 4) if loss == "soft_huber" else 0.03)
    model.compile(optimizer=optimizer, loss=objs[loss] if loss == "soft_huber" else objs[loss](scale=2.0),
                  metrics=[objs["worst_error"], objs["LargestError"](), "mae"])
    model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    model.save(path)

def save_two_outputs(keras, path):
    # A loss per output (one the user's "dice"), and metrics for the second output only.
    objs = objects(keras)
    x, y = data()
    inp = keras.Input((5,))
    h = keras.layers.Dense(6, activation="tanh")(inp)
    model = keras.Model(inp, [keras.layers.Dense(1, name="a")(h), keras.layers.Dense(2, name="b")(h)])
    r = np.random.default_rng(6)
    model.set_weights([r.normal(scale=0.5, size=v.shape).astype("float32") for v in model.get_weights()])
    model.compile(optimizer=keras.optimizers.Adam(0.03), loss={"a": objs["dice"], "b": "mse"},
                  metrics=[None, [objs["worst_error"], "mae"]])
    model.fit(x, [y[:, :1], y], batch_size=8, epochs=2, shuffle=False, verbose=0)
    model.save(path)

out = {}
for loss in ("soft_huber", "ScaledSquares"):
    path = f"{sys.argv[1]}/{loss}.keras"
    save(keras, loss, path)
    out[loss] = continue_training(keras, path)
save_two_outputs(keras, f"{sys.argv[1]}/two_outputs.keras")
out["two_outputs"] = continue_training(keras, f"{sys.argv[1]}/two_outputs.keras")
print("RESULT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def keras_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("resume")
    return d, keras_reference.run(KERAS_REFERENCE, d)


@pytest.mark.parametrize("loss", ["soft_huber", "ScaledSquares", "two_outputs"])
def test_a_keras_file_compiled_with_python_objects_resumes_as_keras(keras_files, loss):
    d, ref = keras_files
    scope = {}
    exec(OBJECTS, scope)
    mine = scope["continue_training"](keras, str(d / f"{loss}.keras"))
    assert sorted(mine) == sorted(ref[loss])
    for key, values in ref[loss].items():  # float32 sums in another order over 2 epochs: 1e-4 relative
        np.testing.assert_allclose(mine[key], values, rtol=1e-4, atol=1e-6, err_msg=key)


def test_without_custom_objects_the_file_loads_uncompiled_with_a_warning_naming_the_entry(keras_files):
    d, _ = keras_files
    with pytest.warns(UserWarning, match=r"loaded uncompiled \(Could not interpret loss identifier: .*ScaledSquares"):
        model = keras.models.load_model(str(d / "ScaledSquares.keras"))
    assert not model._m.compiled
    with pytest.warns(UserWarning, match=r"loaded uncompiled \(Unknown learning rate schedule: 'Warmup'"):
        model = keras.models.load_model(str(d / "soft_huber.keras"))
    assert not model._m.compiled


KERAS_CONTINUES = OBJECTS + r"""
import json, sys
import keras
print("RESULT" + json.dumps(continue_training(keras, sys.argv[1])))
"""


def test_a_kerascpp_file_compiled_with_python_objects_resumes_in_keras(tmp_path):
    # The other way: compile_config records the user's function and classes as Keras 3 does, so that
    # Keras reloads them from custom_objects and continues as kerascpp continues.
    scope = {}
    exec(OBJECTS, scope)
    objs = scope["objects"](keras)
    x, y = scope["data"]()
    inp = keras.Input((5,))
    model = keras.Model(inp, keras.layers.Dense(2)(keras.layers.Dense(6, activation="tanh")(inp)))
    model.compile(optimizer=keras.optimizers.Adam(0.03), loss=objs["soft_huber"],
                  metrics=[objs["worst_error"], objs["LargestError"](), "mae"])
    model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    path = tmp_path / "mine.keras"
    model.save(path)
    ref = keras_reference.run(KERAS_CONTINUES, path)
    mine = scope["continue_training"](keras, str(path))
    assert sorted(mine) == sorted(ref)
    for key, values in ref.items():
        np.testing.assert_allclose(mine[key], values, rtol=1e-4, atol=1e-6, err_msg=key)


def test_bad_custom_entries_are_named(tmp_path):
    scope = {}
    exec(OBJECTS, scope)
    objs = scope["objects"](keras)
    # A loss for one output only, and that one the user's: refused by name at load (a warning; the
    # model loads uncompiled), as compile() refuses an output without a loss beside a custom one.
    inp = keras.Input((5,))
    h = keras.layers.Dense(6, activation="tanh")(inp)
    model = keras.Model(inp, [keras.layers.Dense(1, name="a")(h), keras.layers.Dense(2, name="b")(h)])
    model.compile(optimizer="adam", loss={"a": objs["soft_huber"], "b": "mse"})
    model.save(tmp_path / "two.keras")
    with zipfile.ZipFile(tmp_path / "two.keras") as z:
        members = {n: z.read(n) for n in z.namelist()}
    config = json.loads(members["config.json"])
    loss = config["compile_config"]["loss"]
    config["compile_config"]["loss"] = {"a": loss["a"] if isinstance(loss, dict) else loss[0]}
    members["config.json"] = json.dumps(config).encode()
    with zipfile.ZipFile(tmp_path / "one_loss.keras", "w") as z:
        for n, data in members.items():
            z.writestr(n, data)
    with pytest.warns(UserWarning, match="output 'b' has no loss beside a custom one"):
        loaded = keras.models.load_model(str(tmp_path / "one_loss.keras"), custom_objects=objs)
    assert not loaded._m.compiled

    # A Python metric given for every output is copied per output by from_config(get_config()); a
    # class whose __init__ cannot take its config is named.
    class NoConfig(keras.metrics.Metric):
        def __init__(self):
            super().__init__(name="no_config")
            self.total = self.add_variable(shape=(), name="total")

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.total.assign_add(1.0)

        def result(self):
            return self.total

    with pytest.raises(TypeError, match="Metric NoConfig 'no_config' is given for every output"):
        model.compile(optimizer="adam", loss="mse", metrics=[NoConfig()])
