#!/usr/bin/env python3
"""Write keras.applications models with real Keras 3, for the parity checks of issue 5.

    .venv/bin/python scripts/make_applications_fixtures.py OUT_DIR [--models MobileNet ...] [--batch 2]

Each model is built with weights=None and classifier_activation=None (logits: a softmax over 1,000
random logits would hide differences), its BatchNormalization moving statistics are randomised
(moving_mean ~ N(0, 0.1), moving_variance ~ U(0.5, 1.5), seeded) so that inference normalisation is
really exercised, and it is written to OUT_DIR/<Model>/ as model.keras and model.h5 with
input_0.npy and output_0.npy (Keras's own predictions), the layout `kerascpp verify` reads.
The files are too big to commit (10-550 MB each); `make test` writes three small models and
`make parity` all of them. A folder whose model.keras is already there is kept (delete it to redo).
"""
import argparse
import json
import os
import sys
import time
import zlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

ALL = ["ResNet50", "ResNet50V2", "VGG16", "MobileNet", "MobileNetV2", "MobileNetV3Small", "DenseNet121",
       "InceptionV3", "InceptionResNetV2", "Xception", "EfficientNetB0", "NASNetMobile", "ConvNeXtTiny"]
SMALL = ["MobileNetV3Small", "MobileNet", "EfficientNetB0"]
SIZE_299 = {"InceptionV3", "InceptionResNetV2", "Xception"}  # their default input size


def randomise_batchnorm(model, seed):
    import numpy as np
    for layer in model.layers:
        if type(layer).__name__ != "BatchNormalization":
            continue
        rng = np.random.default_rng([seed, zlib.crc32(layer.name.encode())])
        weights = []
        for v in layer.weights:
            name = v.path.split("/")[-1]
            shape = tuple(v.shape)
            if name == "moving_mean":
                weights.append(rng.normal(0.0, 0.1, shape))
            elif name == "moving_variance":
                weights.append(rng.uniform(0.5, 1.5, shape))
            elif name == "gamma":
                weights.append(rng.uniform(0.8, 1.2, shape))
            else:  # beta
                weights.append(rng.normal(0.0, 0.1, shape))
        layer.set_weights([w.astype("float32") for w in weights])


def write_model(keras, name, folder, batch):
    import numpy as np
    keras.utils.set_random_seed(zlib.crc32(name.encode()))
    side = 299 if name in SIZE_299 else 224
    model = getattr(keras.applications, name)(weights=None, classifier_activation=None,
                                              input_shape=(side, side, 3))
    randomise_batchnorm(model, zlib.crc32(name.encode()))
    shape = (batch,) + tuple(int(d) for d in model.inputs[0].shape[1:])
    x = np.random.default_rng(zlib.crc32(name.encode())).uniform(0.0, 255.0, shape).astype("float32")
    y = model.predict(x, verbose=0)
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, "input_0.npy"), x)
    np.save(os.path.join(folder, "output_0.npy"), y)
    model.save(os.path.join(folder, "model.h5"))
    model.save(os.path.join(folder, "model.keras"))  # last: its presence marks a finished folder
    classes = sorted({type(layer).__name__ for layer in model.layers})
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump({"writer": f"keras {keras.__version__}", "model": name, "params": model.count_params(),
                   "input_shape": list(shape), "layer_classes": classes}, f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--models", nargs="*", default=ALL)
    ap.add_argument("--small", action="store_true", help=f"only {', '.join(SMALL)}")
    ap.add_argument("--batch", type=int, default=2)
    args = ap.parse_args()
    import keras
    models = SMALL if args.small else args.models
    for name in models:
        folder = os.path.join(args.out, name)
        if os.path.exists(os.path.join(folder, "model.keras")):
            print(f"{name}: kept {folder}", flush=True)
            continue
        t0 = time.time()
        write_model(keras, name, folder, args.batch)
        print(f"{name}: written in {time.time() - t0:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
