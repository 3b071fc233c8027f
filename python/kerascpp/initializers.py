"""keras.initializers: Keras 3's classes with their arguments and defaults (made in _objects.py), and get()."""
from ._keras_arguments import OBJECTS
from ._objects import Initializer, make_family

_classes, get = make_family(Initializer)
globals().update(_classes)
# Keras's snake_case names of the classes (keras.regularizers.l2(0.01), keras.initializers.he_normal())
globals().update({alias: _classes[name] for alias, name in OBJECTS["initializers"]["aliases"].items()})


def serialize(obj):
    return {"module": obj._keras_module, "class_name": type(obj).__name__, "config": obj.get_config(),
            "registered_name": None}


def deserialize(config):
    return get(config)
