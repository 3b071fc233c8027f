"""Writes tests/fixtures/damaged/: copies of real Keras files with one thing wrong each, made with h5py
from the seed MLP fixtures (run scripts/make_fixtures.py first). Each file's name says what is wrong.

    .venv/bin/python scripts/make_damaged_fixtures.py
"""
import json
import os
import shutil
import zipfile

import h5py
import numpy as np

ROOT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures")
SRC = os.path.join(ROOT, "seed_mlp_2x10")
OUT = os.path.join(ROOT, "damaged")


def copy(src, name):
    dst = os.path.join(OUT, name)
    shutil.copyfile(os.path.join(SRC, src), dst)
    return dst


def edit_config(path, fn):
    with h5py.File(path, "r+") as f:
        cfg = json.loads(f.attrs["model_config"])
        fn(cfg)
        f.attrs["model_config"] = json.dumps(cfg)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    # A weight dataset removed from a tf_keras full model.
    p = copy("tf_keras/model.h5", "missing_weight.h5")
    with h5py.File(p, "r+") as f:
        g = f["model_weights"]
        name = g.attrs["layer_names"][1]
        name = name.decode() if isinstance(name, bytes) else name
        wn = g[name].attrs["weight_names"][1]
        wn = wn.decode() if isinstance(wn, bytes) else wn
        del g[name][wn]
    # A kernel of the wrong shape in a Keras 3 full model.
    p = copy("keras3/model.h5", "wrong_shape.h5")
    with h5py.File(p, "r+") as f:
        g = f["model_weights"]

        def find_kernel(name, obj):
            if isinstance(obj, h5py.Dataset) and name.endswith("kernel"):
                return name
        kernel = g.visititems(find_kernel)
        del g[kernel]
        g.create_dataset(kernel, data=np.zeros((3, 3), np.float32))
    # An unknown layer class, a Lambda layer, an unsupported dtype.
    p = copy("keras3/model.h5", "unknown_layer.h5")
    edit_config(p, lambda c: c["config"]["layers"][1].update(class_name="FancyDense"))
    p = copy("keras3/model.h5", "lambda_layer.h5")
    edit_config(p, lambda c: c["config"]["layers"][1].update(
        class_name="Lambda", config={"name": "dense", "function": {"class_name": "__lambda__", "config": {"code": "4wEAAA=="}}}))
    p = copy("keras3/model.h5", "unsupported_dtype.h5")
    edit_config(p, lambda c: c["config"]["layers"][1]["config"].update(dtype="complex64"))
    # A float16 weight file: loads, converted to float32 (a good file, for the dtype path).
    # A .keras archive whose weights member is missing.
    with zipfile.ZipFile(os.path.join(SRC, "keras3/model.keras")) as zin, \
            zipfile.ZipFile(os.path.join(OUT, "no_weights.keras"), "w") as zout:
        for item in zin.infolist():
            if item.filename != "model.weights.h5":
                zout.writestr(item, zin.read(item.filename))
    # Not a model at all.
    with open(os.path.join(OUT, "not_a_model.h5"), "w") as f:
        f.write("this is a text file, not HDF5\n")


if __name__ == "__main__":
    main()
