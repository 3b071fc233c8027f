"""Custom layers and Lambda functions from custom_objects run inside kerascpp models.

tests/fixtures/custom/ was written by real Keras (scripts/make_custom_fixtures.py) with the same
layer and function written against keras; here they are written against kerascpp (numpy in call()).
"""
import os

import numpy as np
import pytest

import kerascpp as keras
from kerascpp import ops

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CUSTOM = os.path.join(ROOT, "tests", "fixtures", "custom")


class ScaledDense(keras.layers.Layer):
    def __init__(self, units=3, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], self.units),
                                      initializer="glorot_uniform", trainable=True)
        self.bias = self.add_weight(name="bias", shape=(self.units,), initializer="zeros", trainable=True)
        self.scale = self.add_weight(name="scale", shape=(self.units,), initializer="ones", trainable=False)

    def call(self, inputs):
        return (ops.matmul(inputs, self.kernel) + self.bias) * self.scale

    def get_config(self):
        c = super().get_config()
        c["units"] = self.units
        return c


class DuckScaledDense:
    """The same layer written without kerascpp's base class (Keras-style duck typing)."""

    def __init__(self, units=3, name=None, **kwargs):
        self.units, self.name = units, name

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def build(self, input_shape):
        self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], self.units))
        self.bias = self.add_weight(name="bias", shape=(self.units,), initializer="zeros")
        self.scale = self.add_weight(name="scale", shape=(self.units,), initializer="ones", trainable=False)

    def call(self, inputs):
        return (inputs @ self.kernel + self.bias) * self.scale


def double_relu(x):
    return 2.0 * ops.relu(x)


FORMS = [("keras3", "model.keras"), ("keras3", "model.h5"), ("keras3", "config.json"),
         ("tf_keras", "model.h5"), ("tf_keras", "config.json")]


def load(flavour, form, custom_objects):
    d = os.path.join(CUSTOM, flavour)
    if form != "config.json":
        return keras.models.load_model(os.path.join(d, form), custom_objects=custom_objects)
    with open(os.path.join(d, form)) as f:
        m = keras.models.model_from_json(f.read(), custom_objects=custom_objects)
    m.load_weights(os.path.join(d, "config.weights.h5" if flavour == "keras3" else "config.h5"))
    return m


def io(flavour):
    d = os.path.join(CUSTOM, flavour)
    return np.load(os.path.join(d, "x_0.npy")), np.load(os.path.join(d, "y_0.npy"))


@pytest.mark.parametrize("flavour,form", FORMS)
@pytest.mark.parametrize("cls", [ScaledDense, DuckScaledDense])
def test_custom_layer_and_lambda_match_real_keras(flavour, form, cls):
    # Keras 3 names the Lambda's function in the file; tf_keras stores only bytecode (never run), so
    # there the function is found by the Lambda layer's name.
    key = "double_relu" if flavour == "keras3" else "lam"
    model = load(flavour, form, {"ScaledDense": cls, key: double_relu})
    x, y = io(flavour)
    np.testing.assert_allclose(model.predict(x), y, rtol=1e-5, atol=1e-6)
    assert [w.path for w in model.weights][2:5] == ["scaled/kernel", "scaled/bias", "scaled/scale"]
    assert [w.path for w in model.non_trainable_weights] == ["scaled/scale"]
    layer = model.get_layer("scaled")
    assert isinstance(layer, cls)  # the user's own object, holding the model's variables
    np.testing.assert_array_equal(np.asarray(layer.kernel), model.get_layer("scaled").kernel.numpy())
    assert model.get_layer("lam").get_config()["name"] == "lam"


def test_weights_of_the_custom_layer_are_the_files():
    model = load("keras3", "model.keras", {"ScaledDense": ScaledDense, "double_relu": double_relu})
    import h5py
    with h5py.File(os.path.join(CUSTOM, "keras3", "config.weights.h5"), "r") as f:
        kernel = f["layers/scaled_dense/vars/0"][()]
    np.testing.assert_array_equal(model.get_layer("scaled").kernel.numpy(), kernel)


def test_registered_name_and_save_round_trip(tmp_path):
    model = load("keras3", "model.keras", {"Custom>ScaledDense": ScaledDense, "double_relu": double_relu})
    x, y = io("keras3")
    model.save(tmp_path / "again.keras")
    again = keras.models.load_model(tmp_path / "again.keras",
                                    custom_objects={"ScaledDense": ScaledDense, "double_relu": double_relu})
    np.testing.assert_allclose(again.predict(x), y, rtol=1e-5, atol=1e-6)


def test_lambda_needs_its_function():
    with pytest.raises(NotImplementedError, match="never runs code"):
        load("keras3", "model.keras", {"ScaledDense": ScaledDense})
    with pytest.raises(NotImplementedError, match="double_relu"):
        load("keras3", "model.keras", {"ScaledDense": ScaledDense, "other": double_relu})
    with pytest.raises(NotImplementedError, match="bytecode"):
        load("tf_keras", "model.h5", {"ScaledDense": ScaledDense, "other": double_relu})


def test_python_errors_keep_their_type():
    class Broken(ScaledDense):
        def call(self, inputs):
            raise ValueError("broken on purpose")

    with pytest.raises(ValueError, match="broken on purpose"):
        load("keras3", "model.keras", {"ScaledDense": Broken, "double_relu": double_relu})

    calls = []

    class FailsLater(ScaledDense):
        def call(self, inputs):
            calls.append(1)
            if len(calls) > 1:
                raise TypeError("fails in predict")
            return super().call(inputs)

    m = load("keras3", "model.keras", {"ScaledDense": FailsLater, "double_relu": double_relu})
    with pytest.raises(TypeError, match="fails in predict"):
        m.predict(io("keras3")[0])


def test_custom_objects_must_be_a_dict_of_classes_or_functions():
    with pytest.raises(TypeError):
        keras.models.load_model(os.path.join(CUSTOM, "keras3", "model.keras"), custom_objects=[ScaledDense])
    with pytest.raises(TypeError):
        keras.models.load_model(os.path.join(CUSTOM, "keras3", "model.keras"), custom_objects={"ScaledDense": 3})
