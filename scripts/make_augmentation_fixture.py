#!/usr/bin/env python3
"""Write tests/fixtures/augmentation_training/: Keras 3's image augmentation layers in training with
each random range collapsed to one value (factor=(f, f); RandomContrast's (-f, f)), so that Keras's output is deterministic and
kerascpp's training transform can be compared with it value for value.

    .venv/bin/python scripts/make_augmentation_fixture.py [--out tests/fixtures/augmentation_training]

Writes x.npy (two 7 x 9 RGB images in [0, 255]), and per case i: case_i.json (a one-layer model's
to_json()) and y_i.npy (the layer's output with training=True). Not input_0.npy: the fixture walkers
would run these models at inference.
"""
import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CASES = [
    ("RandomRotation", dict(factor=(0.1, 0.1), fill_mode="constant", interpolation="bilinear")),
    ("RandomRotation", dict(factor=(-0.3, -0.3), fill_mode="reflect")),
    ("RandomRotation", dict(factor=(0.2, 0.2), fill_mode="wrap", interpolation="nearest")),
    ("RandomZoom", dict(height_factor=(0.3, 0.3), width_factor=(-0.2, -0.2), fill_mode="nearest")),
    ("RandomZoom", dict(height_factor=(-0.25, -0.25), fill_mode="reflect")),
    ("RandomTranslation", dict(height_factor=(0.2, 0.2), width_factor=(-0.1, -0.1), fill_mode="constant",
                               fill_value=3.0)),
    ("RandomTranslation", dict(height_factor=(-0.3, -0.3), width_factor=(0.25, 0.25), fill_mode="wrap")),
    ("RandomContrast", dict(factor=(-0.3, 0.3), value_range=(0, 200))),  # U(1 + 0.3, 1 + 0.3)
    ("RandomBrightness", dict(factor=(0.1, 0.1))),
    ("RandomBrightness", dict(factor=(-0.2, -0.2), value_range=(-10, 300))),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "augmentation_training"))
    a = ap.parse_args()
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import numpy as np
    import keras
    os.makedirs(a.out, exist_ok=True)
    x = np.random.default_rng(0).uniform(0, 255, size=(2, 7, 9, 3)).astype("float32")
    np.save(os.path.join(a.out, "x.npy"), x)
    for i, (cls, kw) in enumerate(CASES):
        layer = getattr(keras.layers, cls)(**kw, name="augment")
        inp = keras.Input((7, 9, 3), name="image")
        model = keras.Model(inp, layer(inp))
        with open(os.path.join(a.out, f"case_{i}.json"), "w") as f:
            f.write(model.to_json())
        np.save(os.path.join(a.out, f"y_{i}.npy"), np.asarray(layer(x, training=True)))
    print("wrote", len(CASES), "cases to", a.out)


if __name__ == "__main__":
    main()
