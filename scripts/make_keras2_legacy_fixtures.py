"""Writes `<case>/keras2_emulated/` fixtures: the tf_keras files of a few cases rewritten in the dialect
of standalone Keras 2.0-2.3 (keras-format.md §1, "K2sa"), which cannot be installed next to a current
TensorFlow. Weights, inputs and outputs are tf_keras's (the same model); what changes is the file:
  - root attributes keras_version "2.2.4" / backend "tensorflow" as ASCII bytes, no training_config;
  - layer_names / weight_names as fixed-length NULL-padded byte arrays (h5py < 3);
  - weight dataset names "dense_1/kernel:0" style under each layer group;
  - Sequential config with batch_input_shape on the first layer and no InputLayer
    (model.h5), and the Keras <= 2.2.2 form whose config is a bare list of layers (model_list.h5);
  - Functional models as class_name "Model" with list inbound nodes.

    .venv/bin/python scripts/make_keras2_legacy_fixtures.py
"""
import json
import os
import shutil

import h5py
import numpy as np

ROOT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures")
CASES = ["seed_mlp_2x10", "functional_2in_2out", "nested_model"]


def fixed(names):
    names = [n.encode("utf8") for n in names]
    width = max([len(n) for n in names] + [1])
    return np.array(names, dtype=f"S{width}")


def to_k2sa(cfg, bare_list=False):
    cfg = json.loads(json.dumps(cfg))
    if cfg["class_name"] == "Functional":
        cfg["class_name"] = "Model"
    if cfg["class_name"] == "Sequential":
        layers = cfg["config"]["layers"]
        if layers and layers[0]["class_name"] == "InputLayer":
            shape = layers[0]["config"]["batch_input_shape"]
            layers = layers[1:]
            layers[0]["config"]["batch_input_shape"] = shape
        cfg["config"]["layers"] = layers
        if bare_list:
            cfg["config"] = layers
    return cfg


def write(src_path, dst_path, bare_list=False):
    with h5py.File(src_path, "r") as src, h5py.File(dst_path, "w") as dst:
        dst.attrs["keras_version"] = np.bytes_("2.2.4")
        dst.attrs["backend"] = np.bytes_("tensorflow")
        cfg = to_k2sa(json.loads(src.attrs["model_config"]), bare_list)
        dst.attrs["model_config"] = np.bytes_(json.dumps(cfg))
        sg, dg = src["model_weights"], dst.create_group("model_weights")
        names = [n.decode() if isinstance(n, bytes) else n for n in sg.attrs["layer_names"]]
        dg.attrs["layer_names"] = fixed(names)
        dg.attrs["keras_version"] = np.bytes_("2.2.4")
        dg.attrs["backend"] = np.bytes_("tensorflow")
        for i, name in enumerate(names):
            lg = dg.create_group(name)
            wn = [w.decode() if isinstance(w, bytes) else w for w in sg[name].attrs["weight_names"]]
            new = []
            for w in wn:
                # "dense/kernel:0" -> "dense_<i>/kernel:0": K2sa's own naming; only the suffix is stable.
                head, tail = w.split("/", 1)
                new_name = f"{head}_{i}/{tail}"
                lg.create_dataset(new_name, data=sg[name][w][()])
                new.append(new_name)
            if new:
                lg.attrs["weight_names"] = fixed(new)
            else:
                lg.attrs["weight_names"] = np.zeros((0,), np.float64)


def main():
    for case in CASES:
        src = os.path.join(ROOT, case, "tf_keras")
        out = os.path.join(ROOT, case, "keras2_emulated")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        for f in os.listdir(src):
            if f.startswith(("input_", "output_")):
                shutil.copyfile(os.path.join(src, f), os.path.join(out, f))
        write(os.path.join(src, "model.h5"), os.path.join(out, "model.h5"))
        if case == "seed_mlp_2x10":
            write(os.path.join(src, "model.h5"), os.path.join(out, "model_list.h5"), bare_list=True)
        with open(os.path.join(out, "meta.json"), "w") as f:
            json.dump({"writer": "emulated standalone Keras 2.2.4 (scripts/make_keras2_legacy_fixtures.py)",
                       "case": case, "source": f"{case}/tf_keras"}, f, indent=1)


if __name__ == "__main__":
    main()
