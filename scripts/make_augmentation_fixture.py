#!/usr/bin/env python3
"""Write tests/fixtures/augmentation_training/: Keras 3's image augmentation layers in training with
each random range collapsed to one value (factor=(f, f); RandomContrast's (-f, f)), so that Keras's output
is deterministic and kerascpp's training transform can be compared with it value for value.

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
    # Hue: a collapsed factor still draws the shift's sign, except for 0 and 1 (+-0.5, the same half
    # turn, which Keras's own reruns round differently by 1e-4).
    ("RandomHue", dict(factor=(1.0, 1.0))),
    ("RandomHue", dict(factor=(0.0, 0.0), value_range=(-10, 300))),
    ("RandomSaturation", dict(factor=(0.8, 0.8))),  # k = 4: S past 1
    ("RandomSaturation", dict(factor=(0.3, 0.3), value_range=(0, 1))),
    ("RandomGrayscale", dict(factor=1.0)),
    ("RandomColorDegeneration", dict(factor=(0.4, 0.4))),
    ("RandomColorDegeneration", dict(factor=(-0.7, -0.7), value_range=(10, 200))),
    ("RandomInvert", dict(factor=(1.0, 1.0), value_range=(0, 300))),
    ("RandomPosterization", dict(factor=(3, 3))),
    ("RandomPosterization", dict(factor=(6, 6), value_range=(-20, 300))),
    ("Solarization", dict(value_range=(-10, 300))),  # only (0, 0) factors collapse
    ("RandomSharpness", dict(factor=(0.2, 0.2))),
    ("RandomSharpness", dict(factor=(0.9, 0.9), value_range=(0, 200))),
    ("RandomColorJitter", dict(brightness_factor=(0.1, 0.1), contrast_factor=(-0.2, 0.2),
                               saturation_factor=(0.7, 0.7))),
    ("RandomColorJitter", dict(value_range=(0, 300), brightness_factor=(-0.1, -0.1), contrast_factor=(-0.3, 0.3),
                               saturation_factor=(0.4, 0.4), hue_factor=(1.0, 1.0))),
    ("RandomGaussianBlur", dict(factor=(1.0, 1.0), sigma=(0.5, 0.5))),
    ("RandomGaussianBlur", dict(factor=(1.0, 1.0), kernel_size=(5, 3), sigma=(0.8, 0.8), value_range=(20, 200))),
    ("RandomGaussianBlur", dict(factor=(1.0, 1.0), kernel_size=7, sigma=(1.0, 1.0))),
    ("RandomGaussianBlur", dict(factor=0.0, value_range=(30, 220))),  # never blurs, clips every image
    ("RandomErasing", dict(factor=(1.0, 1.0), scale=(1.0, 1.0), fill_value=7.0)),  # erases the whole image
    ("RandomErasing", dict(factor=(1.0, 1.0), scale=(1.0, 1.0), fill_value=[10.0, 300.0, -5.0])),
    ("RandomPerspective", dict(factor=(1.0, 1.0), scale=0.0, fill_value=9.0)),  # identity
    ("RandomShear", dict(x_factor=0.0, y_factor=0.0, fill_mode="constant")),  # identity
    # Neither displaced nor clipped when the scale collapses to 0.
    ("RandomElasticTransform", dict(factor=(1.0, 1.0), scale=(0.0, 0.0), value_range=(0, 100))),
    ("Equalization", dict()),  # Equalization is deterministic
    ("Equalization", dict(value_range=(0, 200), bins=32)),
    ("Equalization", dict(value_range=(-20, 300), bins=100)),
]
# Keras 3.15 cannot place an Equalization in a model (its output spec is its input: "part of a cycle"):
# the model is built with an Identity in its place, whose entry then becomes the Equalization's.
STAND_IN = {"Equalization"}


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
        model = keras.Model(inp, (keras.layers.Identity(name="augment") if cls in STAND_IN else layer)(inp))
        config = json.loads(model.to_json())
        for entry in config["config"]["layers"]:
            if cls in STAND_IN and entry["config"]["name"] == "augment":
                entry["class_name"], entry["config"] = cls, json.loads(json.dumps(layer.get_config()))
        with open(os.path.join(a.out, f"case_{i}.json"), "w") as f:
            f.write(json.dumps(config))
        np.save(os.path.join(a.out, f"y_{i}.npy"), np.asarray(layer(x, training=True)))
    print("wrote", len(CASES), "cases to", a.out)


if __name__ == "__main__":
    main()
