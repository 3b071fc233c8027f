"""keras.backend functions over kerascpp variables. Reading a value costs a copy of its bytes and
leaves nothing behind (no session, no graph that grows with calls)."""
import numpy as np

from . import _kerascpp

Variable = _kerascpp.Variable


def get_value(x):
    """A numpy copy of a variable's value (arrays and numbers are returned as arrays)."""
    if isinstance(x, Variable):
        return _kerascpp.get_value(x)
    return np.asarray(x)


def batch_get_value(tensors):
    tensors = list(tensors)
    if all(isinstance(t, Variable) for t in tensors):
        return _kerascpp.batch_get_value(tensors)
    return [get_value(t) for t in tensors]


def set_value(x, value):
    if not isinstance(x, Variable):
        raise TypeError(f"set_value expects a kerascpp Variable. Received: {type(x).__name__}")
    _kerascpp.set_value(x, value)


def batch_set_value(tuples):
    for x, value in tuples:
        set_value(x, value)


def clear_session(free_memory=True):
    """Resets automatic layer naming only; models already loaded keep working."""
    _kerascpp.clear_session()


def floatx():
    return "float32"


def epsilon():
    return 1e-7


def image_data_format():
    return "channels_last"


def backend():
    return "kerascpp"


def int_shape(x):
    return tuple(x.shape)


def count_params(x):
    return int(np.prod(x.shape))
