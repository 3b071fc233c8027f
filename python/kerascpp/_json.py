"""Configs cross into kerascpp as JSON text: numpy numbers and arrays, and kerascpp objects that
carry a Keras config (schedules, losses...), are written as Keras writes them."""
import json

import numpy as np


def _default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if hasattr(obj, "_serialize"):  # kerascpp objects: {"module", "class_name", "config"}
        return obj._serialize()
    raise TypeError(f"Could not serialize {obj!r} of type {type(obj).__name__} to a Keras config")


def dumps(obj):
    return json.dumps(obj, default=_default)


def kwargs_of(names, args, kwargs, owner):
    """Keras's positional arguments by name, merged into kwargs (a TypeError like Python's)."""
    if len(args) > len(names):
        raise TypeError(f"{owner}() takes at most {len(names)} positional arguments ({len(args)} given)")
    out = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in out:
            raise TypeError(f"{owner}() got multiple values for argument '{k}'")
        out[k] = v
    return out


def classes_of(base, entries, module):
    """One Python class per entry of an engine list ([(class_name, [arguments], [identifiers])], from
    src/training/**/*_list.inc), subclassing `base` and taking Keras's arguments in Keras's order."""
    return {name: type(name, (base,), {"_args": tuple(args), "__module__": module,
                                       "__doc__": f"keras {name}({', '.join(args)})"})
            for name, args, _ in entries}
