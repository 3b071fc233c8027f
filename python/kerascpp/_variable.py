"""Variable (a weight of a kerascpp model) behaves like an array: numpy protocol and operators."""
import operator

import numpy as np

from . import _kerascpp

Variable = _kerascpp.Variable


def _array(self, dtype=None, copy=None):
    a = self.value
    if dtype is not None and np.dtype(dtype) != a.dtype:
        return a.astype(dtype)
    return a.copy() if copy else a


def _binary(op, reflected=False):
    if reflected:
        return lambda self, other: op(np.asarray(other), self.value)
    return lambda self, other: op(self.value, np.asarray(other))


Variable.__array__ = _array
Variable.__array_priority__ = 100
for _name, _op in [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("truediv", operator.truediv), ("matmul", operator.matmul), ("pow", operator.pow)]:
    setattr(Variable, f"__{_name}__", _binary(_op))
    setattr(Variable, f"__r{_name}__", _binary(_op, reflected=True))
Variable.__float__ = lambda self: float(self.value)
Variable.__int__ = lambda self: int(self.value)
Variable.__neg__ = lambda self: -self.value
Variable.__getitem__ = lambda self, key: self.value[key]
Variable.__len__ = lambda self: self.shape[0]
Variable.ndim = property(lambda self: len(self.shape))
