"""Writes src/layers/keras_arguments.inc (a JSON table inside a C++ raw string) from real Keras 3: for every layer class of kerascpp's
layer list (include/kerascpp/layer_list.inc), the arguments of keras.layers.<Class>.__init__ in
Keras's positional order, which of them are required, and the config Keras gives a layer made with
only those (its defaults); the same for the classes of keras.initializers, keras.regularizers and
keras.constraints, with their snake_case aliases. kerascpp::layers::layer() completes a layer's
arguments from it (src/models/layer_constructors.cpp), and the Python package's layer, initializer,
regularizer and constraint classes are made from it (kerascpp._kerascpp.keras_arguments());
tests/python/test_build_models.py checks it is current.

    .venv/bin/python scripts/make_keras_arguments.py [--check]
"""
import inspect
import json
import os
import re
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "src", "layers", "keras_arguments.inc")

# Values for the arguments a class requires, to make one and read its defaults.
REQUIRED = {"units": 2, "filters": 2, "kernel_size": 3, "rate": 0.5, "stddev": 0.1, "n": 2, "target_shape": [2],
            "dims": [1], "input_dim": 4, "output_dim": 2, "cell": None, "layer": None, "num_heads": 2,
            "key_dim": 2, "equation": "ab,bc->ac", "output_shape": [2], "height": 2, "width": 2, "axes": 1,
            "head_dim": 2, "num_query_heads": 2, "num_key_value_heads": 2, "scale": 1.0, "init_values": 0.1,
            "groups": 1, "activation": "relu", "padding": 1, "cropping": 1, "size": 2, "mean": None,
            "variance": None, "axis": -1, "pool_size": 2, "cells": None, "factor": 0.2, "height_factor": 0.2,
            "width_factor": 0.2, "x_factor": 0.2, "max_number": 3, "num_bins": 4}
REQUIRED_OF = {"RandomPosterization": {"factor": 4}}  # where a class takes another range
# Arguments a class refuses to be made without although their default is None: given to make the
# sample, then left out of its defaults.
NEEDED_OF = {"CategoryEncoding": {"num_tokens": 4}, "Discretization": {"bin_boundaries": [0.0, 1.0]}}
SKIP = {"InputLayer"}  # made by keras.Input


# The recurrent cells an RNN layer takes (keras.layers.RNN(keras.layers.LSTMCell(8))): arguments of
# other layers, not layers of a model (src/layers/rnn/rnn_cell.cpp).
CELLS = ["SimpleRNNCell", "LSTMCell", "GRUCell", "StackedRNNCells"]


def classes():
    text = open(os.path.join(ROOT, "include", "kerascpp", "layer_list.inc")).read()
    return re.findall(r"^KCPP_LAYER\((\w+),", text, re.M) + CELLS


def describe(keras, name):
    cls = getattr(keras.layers, name, None)
    if cls is None:
        return None
    params = [p for p in inspect.signature(cls.__init__).parameters.values()
              if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    required = [p.name for p in params if p.default is p.empty]
    sample = {k: REQUIRED_OF.get(name, {}).get(k, REQUIRED[k]) for k in required}
    sample.update(NEEDED_OF.get(name, {}))
    if name in ("Bidirectional", "TimeDistributed"):
        sample["layer"] = keras.layers.LSTM(2) if name == "Bidirectional" else keras.layers.Dense(2)
    if name == "RNN":
        sample["cell"] = keras.layers.LSTMCell(2)
    if name == "StackedRNNCells":
        sample["cells"] = [keras.layers.LSTMCell(2)]
    config = json.loads(json.dumps(cls(**sample).get_config()))  # tuples as lists, as configs hold them
    # What Keras makes of the required values (kernel_size=3 -> [3, 3]): how a scalar given spreads.
    forms = {k: config[k] for k in required if isinstance(config.get(k), list)}
    # Arguments whose default (None) Keras turns into a value of other arguments (pooling strides from
    # pool_size); None defaults that are one fixed value (data_format, activation) are plain defaults.
    fixed = ("name", "dtype", "data_format", "activation")
    derived = sorted(p.name for p in params
                     if p.default is None and p.name not in fixed and config.get(p.name) is not None)
    for k in ["name"] + required + list(NEEDED_OF.get(name, {})):
        config.pop(k, None)
    if "seed" in derived:  # Keras draws a seed when given None (RandomCrop): no fixed default
        config["seed"] = None
    return {"arguments": [p.name for p in params], "required": required, "defaults": config, "forms": forms,
            "derived": derived}


# keras.initializers classes kerascpp does not run (src/layers/initializers.h), and base classes.
SKIP_OBJECTS = {"Initializer", "STFT", "STFTInitializer", "IdentityInitializer", "OrthogonalInitializer",
                "Regularizer", "Constraint"}


def objects(module):
    """Per class: arguments and default config; and the aliases (snake_case names) of each class."""
    classes, aliases = {}, {}
    for name, cls in sorted(module.ALL_OBJECTS_DICT.items()):
        if not isinstance(cls, type) or cls.__name__ in SKIP_OBJECTS:
            continue
        if name != cls.__name__:
            aliases[name] = cls.__name__
            continue
        params = [p.name for p in inspect.signature(cls.__init__).parameters.values()
                  if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
        classes[name] = {"arguments": params, "defaults": json.loads(json.dumps(cls().get_config()))}
    return {"classes": classes, "aliases": aliases}


def main():
    import keras
    from keras.src import constraints, initializers, regularizers
    table = {}
    for name in classes():
        if name not in SKIP:
            d = describe(keras, name)
            if d is not None:
                table[name] = d
    groups = {"initializers": initializers, "regularizers": regularizers, "constraints": constraints}
    text = ("// Generated by scripts/make_keras_arguments.py from Keras " + keras.__version__ + ". Do not edit.\n"
            "// layers: per class, its arguments in Keras's positional order, the required ones, the config of a\n"
            "// layer made without the others (Keras's defaults), the form Keras gives each required value\n"
            "// (kernel_size=3 -> [3, 3]) and the arguments whose default comes from another one; objects: the\n"
            "// same for the classes of keras.initializers, regularizers and constraints, with their aliases.\n"
            'R"json({"layers": {\n' +
            ",\n".join(f"{json.dumps(name)}: {json.dumps(table[name], sort_keys=True)}" for name in sorted(table)) +
            '},\n"objects": {\n' +
            ",\n".join(f"{json.dumps(k)}: {json.dumps(objects(m), sort_keys=True)}" for k, m in groups.items()) +
            '}})json"\n')
    if "--check" in sys.argv:
        sys.exit(0 if open(OUT).read() == text else 1)
    open(OUT, "w").write(text)
    print(f"wrote {OUT}: {len(table)} classes")


if __name__ == "__main__":
    main()
