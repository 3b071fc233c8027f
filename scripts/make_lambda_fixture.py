#!/usr/bin/env python3
"""Write tests/fixtures/lambda_layers/: Lambda layers as Keras users save them, by real Keras.

    .venv/bin/python scripts/make_lambda_fixture.py [--out tests/fixtures/lambda_layers]

tf_keras/: a FaceNet-shaped miniature (Inception-ResNet's residual branch scaled by
`Lambda(scaling, arguments={"scale": 0.17})`, the embedding normalised by
`Lambda(K.l2_normalize, arguments={"axis": 1}, name="normalize")`, as keras-facenet builds it) and a
`Lambda(abs)` that tf_keras saves by name. keras3/: `Lambda(keras.ops.abs)` and
`Lambda(keras.ops.mean, arguments={"axis": 1})`, saved by name. Each folder holds model.h5 (and
model.keras for Keras 3), x_0.npy and y_0.npy (the writer's predictions). Not input_0.npy: the
fixture walkers would then expect these models to load without the functions the caller binds.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def scaling(x, scale):
    return x * scale


def write(flavour, out):
    import numpy as np
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(17)
    if flavour == "tf_keras":
        import tf_keras as keras
        K = keras.backend
        L = keras.layers
        x = keras.Input((8, 8, 3), name="image")
        h = L.Conv2D(6, 3, padding="same", use_bias=False, name="stem")(x)
        h = L.BatchNormalization(name="stem_bn")(h)
        h = L.Activation("relu", name="stem_relu")(h)
        branch = L.Conv2D(6, 1, name="branch")(h)
        up = L.Lambda(scaling, output_shape=(8, 8, 6), arguments={"scale": 0.17}, name="Block35_1_ScaleSum")(branch)
        h = L.add([h, up], name="residual")
        up2 = L.Lambda(scaling, arguments={"scale": 0.1}, name="Block17_1_ScaleSum")(L.Conv2D(6, 1, name="branch2")(h))
        h = L.add([h, up2], name="residual2")
        h = L.GlobalAveragePooling2D(name="pool")(h)
        h = L.Lambda(abs, name="absolute")(L.Dense(5, name="bottleneck")(h))
        y = L.Lambda(K.l2_normalize, arguments={"axis": 1}, name="normalize")(h)
    else:
        import keras
        L = keras.layers
        x = keras.Input((4, 6), name="x")
        h = L.Dense(5, name="dense")(x)
        h = L.Lambda(keras.ops.abs, name="absolute")(h)
        y = L.Lambda(keras.ops.mean, arguments={"axis": 1}, name="mean")(h)
    model = keras.Model(x, y, name=f"lambda_{flavour}")
    for layer in model.layers:
        ws = layer.get_weights()
        if ws:
            layer.set_weights([(np.abs(rng.normal(size=w.shape)) + 0.5 if "variance" in v.name else
                                rng.normal(size=w.shape) * 0.5).astype("float32") for v, w in zip(layer.weights, ws)])
    xv = rng.normal(size=(3,) + tuple(model.inputs[0].shape[1:])).astype("float32")
    np.save(os.path.join(out, "x_0.npy"), xv)
    np.save(os.path.join(out, "y_0.npy"), model.predict(xv, verbose=0))
    model.save(os.path.join(out, "model.h5"))
    if flavour == "keras3":
        model.save(os.path.join(out, "model.keras"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "lambda_layers"))
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
