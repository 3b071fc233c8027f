#!/usr/bin/env python3
"""Write tests/fixtures/custom/: models with a Python custom layer and a Lambda layer, by real Keras.

    .venv/bin/python scripts/make_custom_fixtures.py [--out tests/fixtures/custom]

Writes <out>/keras3/ (model.keras, model.h5, config.json + config.weights.h5) and <out>/tf_keras/
(model.h5, config.json + config.h5), each with x_0.npy and y_0.npy (the writer's own predictions).
The inputs are not named input_0.npy on purpose: `kerascpp verify` and scripts/convert_fixtures.sh
walk every folder holding an input_0.npy, and these models need Python custom objects.
The custom layer and function here must match tests/python/test_custom_objects.py.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def write(flavour, out):
    import numpy as np
    if flavour == "tf_keras":
        import tf_keras as keras
        from tf_keras import backend as ops_mod
        matmul = ops_mod.dot
        relu = ops_mod.relu
    else:
        import keras
        matmul = keras.ops.matmul
        relu = keras.ops.relu

    class ScaledDense(keras.layers.Layer):
        """y = (x @ kernel + bias) * scale, with a non-trainable scale."""

        def __init__(self, units=3, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def build(self, input_shape):
            self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], self.units),
                                          initializer="glorot_uniform", trainable=True)
            self.bias = self.add_weight(name="bias", shape=(self.units,), initializer="zeros", trainable=True)
            self.scale = self.add_weight(name="scale", shape=(self.units,), initializer="ones", trainable=False)

        def call(self, inputs):
            return (matmul(inputs, self.kernel) + self.bias) * self.scale

        def get_config(self):
            c = super().get_config()
            c["units"] = self.units
            return c

    def double_relu(x):
        return 2.0 * relu(x)

    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(77)
    inp = keras.Input(shape=(5,), name="x")
    h = keras.layers.Dense(6, activation="tanh", name="d1")(inp)
    h = ScaledDense(4, name="scaled")(h)
    h = keras.layers.Lambda(double_relu, name="lam")(h)
    y = keras.layers.Dense(2, name="d2")(h)
    model = keras.Model(inp, y, name="custom_model")
    for layer in model.layers:
        ws = layer.get_weights()
        if ws:
            layer.set_weights([(rng.normal(size=w.shape) * 0.5).astype("float32") for w in ws])
    x = rng.normal(size=(7, 5)).astype("float32")
    yv = model.predict(x, verbose=0)
    np.save(os.path.join(out, "x_0.npy"), x)
    np.save(os.path.join(out, "y_0.npy"), yv)
    with open(os.path.join(out, "config.json"), "w") as f:
        f.write(model.to_json())
    model.save(os.path.join(out, "model.h5"))
    if flavour == "keras3":
        model.save(os.path.join(out, "model.keras"))
        model.save_weights(os.path.join(out, "config.weights.h5"))
    else:
        model.save_weights(os.path.join(out, "config.h5"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "custom"))
    ap.add_argument("--writer", choices=["keras3", "tf_keras"])
    a = ap.parse_args()
    if a.writer:
        write(a.writer, os.path.join(a.out, a.writer))
        return
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", KERAS_BACKEND="tensorflow",
               PYTHONHASHSEED="0")
    env.pop("TF_USE_LEGACY_KERAS", None)
    for w in ["keras3", "tf_keras"]:
        subprocess.run([sys.executable, __file__, "--out", a.out, "--writer", w], check=True, env=env)
        print("wrote", os.path.join(a.out, w))


if __name__ == "__main__":
    main()
