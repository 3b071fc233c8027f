"""Keras 3's arguments and defaults for every layer class kerascpp runs and for the classes of
keras.initializers, regularizers and constraints: the engine's table (src/layers/keras_arguments.inc,
written from real Keras by scripts/make_keras_arguments.py), the one source for C++ and Python."""
import json

from . import _kerascpp

_TABLE = json.loads(_kerascpp.keras_arguments())
LAYERS = _TABLE["layers"]
OBJECTS = _TABLE["objects"]
