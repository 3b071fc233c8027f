"""The classes of keras.initializers, keras.regularizers and keras.constraints, made from the table
scripts/make_keras_arguments.py writes from real Keras (_keras_arguments.OBJECTS): Keras's arguments,
defaults, get_config / from_config and get(). Their numbers come from kerascpp's engine, which also
applies them inside layers (src/layers/initializers.*, constraints.*, regularizers.*)."""
import json

import numpy as np

from . import _kerascpp
from ._json import kwargs_of
from ._keras_arguments import OBJECTS


class ConfigObject:
    """An object that is its Keras config (initializers, recurrent cells): attributes, get_config,
    from_config."""

    def __getattr__(self, key):
        config = self.__dict__.get("_config", {})
        if key in config:
            return config[key]
        raise AttributeError(key)

    def get_config(self):
        return dict(self._config)

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class KerasObject(ConfigObject):
    _family = None
    _keras_module = None

    def __init__(self, *args, **kwargs):
        spec = OBJECTS[self._family]["classes"][type(self).__name__]
        names = spec["arguments"]
        given = kwargs_of(names, args, kwargs, f"{type(self).__name__}.__init__")
        for k in given:
            if k not in names:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument '{k}'")
        config = dict(spec["defaults"])
        for k, v in given.items():
            config[k] = list(v) if isinstance(v, tuple) else (v.item() if isinstance(v, np.generic) else v)
        self._config = config

    def _json(self):
        return json.dumps({"class_name": type(self).__name__, "config": self._config})

    def __repr__(self):
        return f"<{self._keras_module}.{type(self).__name__} {self._config}>"


class Initializer(KerasObject):
    _family, _keras_module = "initializers", "keras.initializers"

    def __call__(self, shape, dtype=None):
        from ._builder import _next_seed
        return _kerascpp.initial_value(self._json(), [int(d) for d in shape], _next_seed())


class Regularizer(KerasObject):
    _family, _keras_module = "regularizers", "keras.regularizers"

    def __call__(self, x):
        x = np.asarray(x, dtype="float32")
        c = self._config
        if type(self).__name__ == "OrthogonalRegularizer":
            raise NotImplementedError("kerascpp does not compute OrthogonalRegularizer")
        return float(c.get("l1", 0.0) * np.abs(x).sum() + c.get("l2", 0.0) * np.square(x).sum())


class Constraint(KerasObject):
    _family, _keras_module = "constraints", "keras.constraints"

    def __call__(self, w):
        return _kerascpp.apply_constraint(self._json(), np.asarray(w, dtype="float32"))


def make_family(base):
    """The names of one family's module: its classes, their snake_case aliases (keras.regularizers.l2,
    keras.initializers.he_normal), and get / serialize / deserialize (Keras's identifier rules)."""
    table = OBJECTS[base._family]
    classes = {name: type(name, (base,), {"__module__": base._keras_module}) for name in table["classes"]}

    def get(identifier):
        if identifier is None or isinstance(identifier, base) or (callable(identifier) and not isinstance(identifier, str)):
            return identifier
        if isinstance(identifier, dict):
            cls = classes.get(identifier.get("class_name"))
            if cls is None:
                raise ValueError(f"Could not interpret {base._family[:-1]} identifier: {identifier}")
            return cls.from_config(identifier.get("config") or {})
        if isinstance(identifier, str):
            cls = classes.get(table["aliases"].get(identifier, identifier))
            if cls is not None:
                return cls()
        raise ValueError(f"Could not interpret {base._family[:-1]} identifier: {identifier}")

    def serialize(obj):
        return {"module": obj._keras_module, "class_name": type(obj).__name__, "config": obj.get_config(),
                "registered_name": None}

    names = dict(classes, get=get, serialize=serialize, deserialize=get)
    names.update({alias: classes[name] for alias, name in table["aliases"].items()})
    return names
