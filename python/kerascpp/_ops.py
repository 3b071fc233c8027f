"""The functions of keras.ops (kerascpp/ops.py holds them): every function Keras 3 records as an
operation node (the table _keras_ops.py, written from Keras by scripts/make_keras_ops.py).

On symbolic tensors (keras.Input and what layers make of it) a function adds the op node Keras adds:
the same class, config and call, so the model runs natively, trains, and saves what Keras reloads. On
arrays it computes at once: a few with numpy (fast in the call() of custom layers), the others by the
same native op node, run once.

    x = keras.Input((5, 6))
    y = keras.ops.mean(keras.layers.Dense(6)(x), axis=1) + x[:, -1]
"""
import json

import numpy as np

from . import _kerascpp
from ._builder import KerasTensor, _jsonable
from ._keras_ops import OPS, REQUIRED

# The functions that compute with numpy on arrays (the rest run their native op node).
_NUMPY = {
    "matmul": np.matmul, "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "square": np.square, "absolute": np.abs, "tanh": np.tanh, "sum": np.sum, "mean": np.mean, "max": np.max,
    "min": np.min, "concatenate": np.concatenate, "reshape": np.reshape, "transpose": np.transpose,
    "expand_dims": np.expand_dims, "squeeze": np.squeeze, "where": np.where, "clip": np.clip, "stack": np.stack,
    "dot": lambda a, b: np.dot(np.asarray(a), np.asarray(b)),
    "cast": lambda x, dtype: np.asarray(x).astype(_dtype_name(dtype)),
    "relu": lambda x: np.maximum(np.asarray(x), 0),
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-np.asarray(x))),
    "softmax": lambda x, axis=-1: _softmax(np.asarray(x), axis),
}


def _softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _dtype_name(dtype):
    """A dtype as Keras writes it ("float32"), from a string, a numpy dtype or type."""
    return dtype if isinstance(dtype, str) or dtype is None else np.dtype(dtype).name


def _symbolic(v):
    if isinstance(v, KerasTensor):
        return True
    if isinstance(v, (list, tuple)):
        return any(_symbolic(e) for e in v)
    if isinstance(v, dict):
        return any(_symbolic(e) for e in v.values())
    return False


def _bind(name, params, args, kwargs):
    """Python's binding of keras.ops.<name>(*args, **kwargs) to its parameters, defaults filled in."""
    bound = {}
    star = next((i for i, (p, _) in enumerate(params) if p.startswith("*")), None)
    if star is not None:  # einsum(subscripts, *operands): the positionals from there on
        bound[params[star][0]] = list(args[star:])
        args = args[:star]
    elif len(args) > len(params):
        raise TypeError(f"{name}() takes {len(params)} positional arguments but {len(args)} were given")
    for (p, _), a in zip(params, args):
        bound[p] = a
    names = [p for p, _ in params]
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
        if k in bound:
            raise TypeError(f"{name}() got multiple values for argument '{k}'")
        bound[k] = v
    for p, default in params:
        if p not in bound:
            if default == REQUIRED:
                raise TypeError(f"{name}() missing required argument: '{p}'")
            bound[p] = default
    if "dtype" in bound:
        bound["dtype"] = _dtype_name(bound["dtype"])
    return bound


def _key(k):
    """x[k]'s key as Keras 3 saves GetItem's: slices and the ellipsis as objects, None, ints, tuples as lists."""
    if isinstance(k, slice):
        return {"class_name": "__slice__", "config": {"start": _key(k.start), "stop": _key(k.stop), "step": _key(k.step)}}
    if k is Ellipsis:
        return {"class_name": "__ellipsis__", "config": {}}
    if isinstance(k, tuple):
        return [_key(e) for e in k]
    if isinstance(k, (np.integer, np.bool_)):
        return k.item()
    return k


class _Call:
    """One call's arguments with its tensors numbered: the node's template ({"kerascpp_input": i}) and
    the graph's ({"__keras_tensor__" i}), or the arrays that an eager call passes."""

    def __init__(self, is_tensor):
        self.is_tensor = is_tensor
        self.tensors = []

    def __call__(self, v):
        if self.is_tensor(v):
            self.tensors.append(v)
            return {"kerascpp_input": len(self.tensors) - 1}
        if isinstance(v, (list, tuple)):
            return [self(e) for e in v]
        if isinstance(v, dict):
            return {str(k): self(e) for k, e in sorted(v.items())}  # the engine walks keys sorted
        return _jsonable(v)


def _graph_form(template):
    """The node template's placeholders as the graph's tensor references."""
    if isinstance(template, dict):
        if set(template) == {"kerascpp_input"}:
            return {"class_name": "__keras_tensor__", "config": {"kerascpp_tensor": template["kerascpp_input"]}}
        return {k: _graph_form(v) for k, v in template.items()}
    if isinstance(template, list):
        return [_graph_form(v) for v in template]
    return template


def _is_array(v):
    return isinstance(v, (np.ndarray, np.generic)) or (hasattr(v, "__array__") and not isinstance(v, (list, tuple)))


def _run(name, entry, args, kwargs):
    bound = _bind(name, entry["params"], args, kwargs)
    symbolic = any(_symbolic(v) for v in bound.values())
    if not symbolic and name in _NUMPY:
        return _NUMPY[name](*args, **kwargs)
    if name == "get_item":
        bound["key"] = _key(bound["key"])
    convert = _Call((lambda v: isinstance(v, KerasTensor)) if symbolic else _is_array)
    call_args = []
    for p in entry["args"]:
        call_args += [convert(v) for v in bound[p]] if p.startswith("*") else [convert(bound[p])]
    call = {"args": call_args,
            "kwargs": {k: convert(bound[p]) for k, p in sorted(entry["kwargs"].items())}}
    cls = entry["module"] + "." + entry["class"]
    config = {"name": _kerascpp.unique_name(_kerascpp.to_snake_case(entry["class"]))}
    for k, p in entry["config"].items():
        if _symbolic(bound[p]) or (not symbolic and _is_array(bound[p])):
            raise NotImplementedError(f"keras.ops.{name}: kerascpp takes its argument '{p}' as a constant, "
                                      f"not a tensor, as Keras stores it in the op's config")
        config[k] = _jsonable(bound[p])
    if not convert.tensors and entry["args"] and not entry["args"][0].startswith("*"):  # numbers only (ops.exp(2.0)): the first operand as an array
        call["args"][0] = convert(np.asarray(bound[entry["args"][0]], dtype="float32"))
    if not convert.tensors:
        raise NotImplementedError(f"keras.ops.{name} is given no tensor: kerascpp runs it on arrays or symbolic tensors")
    config["call"] = call
    node = _kerascpp.op_node(cls, json.dumps(config))
    if symbolic:
        out = _kerascpp.call_layer(node, json.dumps(_graph_form(call)), convert.tensors)
    else:
        out = _kerascpp.run_op(node, [np.asarray(t, dtype="float32") for t in convert.tensors])
    return out[0] if len(out) == 1 else list(out)


def _make(name, entry):
    def op(*args, **kwargs):
        return _run(name, entry, args, kwargs)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"keras.ops.{name} ({entry['module']}.{entry['class']} on symbolic tensors)."
    return op


FUNCTIONS = {name: _make(name, entry) for name, entry in OPS.items()}
FUNCTIONS.update({name: f for name, f in _NUMPY.items() if name not in OPS})
FUNCTIONS["abs"] = FUNCTIONS["absolute"]  # Keras's aliases
FUNCTIONS["conj"] = FUNCTIONS["conjugate"]


def _convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    return np.asarray(x, dtype=_dtype_name(dtype) or "float32")


def _shape(x):
    return tuple(x.shape) if isinstance(x, KerasTensor) else tuple(np.shape(x))


FUNCTIONS["convert_to_tensor"] = _convert_to_tensor
FUNCTIONS["shape"] = _shape


def _operator(name, swap=False):
    f = FUNCTIONS[name]
    return (lambda self, other: f(other, self)) if swap else (lambda self, other: f(self, other))


# Python's operators on symbolic tensors, as Keras 3's KerasTensor defines them (== and != stay the
# identity of tensors, which models and dicts use).
for _dunder, _fn in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "true_divide"),
                     ("floordiv", "floor_divide"), ("mod", "mod"), ("pow", "power"), ("matmul", "matmul"),
                     ("and", "logical_and"), ("or", "logical_or"), ("xor", "logical_xor")]:
    setattr(KerasTensor, f"__{_dunder}__", _operator(_fn))
    setattr(KerasTensor, f"__r{_dunder}__", _operator(_fn, swap=True))
for _dunder, _fn in [("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal")]:
    setattr(KerasTensor, f"__{_dunder}__", _operator(_fn))
KerasTensor.__neg__ = lambda self: FUNCTIONS["negative"](self)
KerasTensor.__abs__ = lambda self: FUNCTIONS["absolute"](self)
KerasTensor.__invert__ = lambda self: FUNCTIONS["logical_not"](self)
KerasTensor.__getitem__ = lambda self, key: FUNCTIONS["get_item"](self, key)
KerasTensor.__round__ = lambda self, ndigits=None: FUNCTIONS["round"](self, ndigits or 0)
