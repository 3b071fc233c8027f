"""The built-in layers of keras.layers over kerascpp's engine: one class per class of kerascpp's layer
list, made from Keras's arguments (positional order, required ones and defaults from
the engine's table, src/layers/keras_arguments.inc, written from real Keras), callable on
symbolic tensors (keras.Input) to build models, and on arrays."""
import json

import numpy as np

from . import _kerascpp
from ._json import kwargs_of
from ._keras_arguments import LAYERS
from ._objects import ConfigObject

KerasTensor = _kerascpp.KerasTensor

_random = {"generator": None}  # keras.utils.set_random_seed's generator (None: the random device)


def set_random_seed(seed):
    _random["generator"] = np.random.default_rng(int(seed))


def _next_seed():
    g = _random["generator"]
    return None if g is None else int(g.integers(0, 2**63 - 1))


def _jsonable(v):
    """A layer argument as its config value: Keras objects by their config, tuples as lists."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (list, tuple)):
        return [_jsonable(e) for e in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(e) for k, e in v.items()}
    if isinstance(v, (NativeLayer, Cell)):
        return {"module": "keras.layers", "class_name": v._class_name if isinstance(v, Cell) else v.class_name,
                "config": v.get_config(), "registered_name": None}
    if hasattr(v, "get_config"):  # initializers, regularizers, constraints
        return {"module": getattr(v, "_keras_module", "keras"), "class_name": type(v).__name__,
                "config": _jsonable(v.get_config()), "registered_name": None}
    if callable(v) and hasattr(v, "__name__"):  # an activation function
        return v.__name__
    raise TypeError(f"kerascpp cannot use {v!r} as a layer argument")


def layer_config(class_name, args, kwargs):
    """keras.layers.<class_name>(*args, **kwargs) as the arguments the engine completes with Keras's
    defaults and forms (kerascpp::layers::layer, src/layers/keras_arguments.cpp), with Keras's errors."""
    if kwargs.get("weights") is not None:
        raise NotImplementedError(f"{class_name}(weights=...) is not supported by kerascpp: call set_weights() "
                                  "once the layer is built")
    names = LAYERS[class_name]["arguments"]
    given = kwargs_of(names, args, {k: v for k, v in kwargs.items() if k != "weights"}, f"{class_name}.__init__")
    # Keras keeps these out of the config (an input shape goes to the model's input).
    dropped = {"input_shape", "batch_input_shape", "batch_size", "input_dim", "autocast"} - set(names)
    return {k: _jsonable(v) for k, v in given.items() if k not in dropped}


def _symbolic(value):
    return isinstance(value, KerasTensor) or (
        isinstance(value, (list, tuple, dict)) and any(_symbolic(v) for v in (value.values() if isinstance(value, dict) else value)))


def call_symbolic(native, args, kwargs):
    """native(*args, **kwargs) on symbolic tensors: the outputs (one, or a list)."""
    tensors = []

    def convert(v):
        if isinstance(v, KerasTensor):
            tensors.append(v)
            return {"class_name": "__keras_tensor__", "config": {"kerascpp_tensor": len(tensors) - 1}}
        if isinstance(v, (list, tuple)):
            return [convert(e) for e in v]
        if isinstance(v, dict):
            return {str(k): convert(e) for k, e in v.items()}
        return _jsonable(v)

    call = {"args": [convert(a) for a in args], "kwargs": {k: convert(v) for k, v in kwargs.items()}}
    out = _kerascpp.call_layer(native, json.dumps(call), tensors, _next_seed())
    return out[0] if len(out) == 1 else list(out)


def call_eager(layer, args, kwargs):
    """layer(x) on arrays: the layer run once on them (through a one-layer model, as Keras builds it)."""
    from .models import Model

    if len(args) != 1 or kwargs:
        raise NotImplementedError(f"kerascpp calls layer '{layer.name}' on arrays with one input and no options; "
                                  "build a model (keras.Input and keras.Model) for more")
    xs = args[0]
    many = isinstance(xs, (list, tuple))
    arrays = [np.asarray(a, dtype="float32") for a in (xs if many else [xs])]
    inputs = [_kerascpp.input_tensor(list(a.shape[1:]), json.dumps({"batch_size": None})) for a in arrays]
    out = call_symbolic(layer._l, [inputs if many else inputs[0]], {})
    return Model(inputs=inputs, outputs=out).predict(arrays if many else arrays[0], verbose=0)


class NativeLayer:
    """A kerascpp layer: one made here (keras.layers.Dense(4)), or one of a model (model.layers)."""

    _class_name = None

    def __init__(self, *args, **kwargs):
        self._input_shape_arg = kwargs.get("input_shape")
        if kwargs.get("batch_input_shape") is not None:
            self._input_shape_arg = tuple(kwargs["batch_input_shape"][1:])
        config = layer_config(self._class_name, args, kwargs)
        self._l = _kerascpp.make_layer(self._class_name, json.dumps(config))
        self._owner, self._first_output = None, None

    @classmethod
    def _of(cls, native, owner):
        obj = object.__new__(cls)
        obj._l, obj._owner, obj._input_shape_arg, obj._first_output = native, owner, None, None
        return obj

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    name = property(lambda self: self._l.name)
    built = property(lambda self: self._l.built)
    class_name = property(lambda self: self._l.class_name)
    weights = property(lambda self: self._l.weights)
    variables = weights
    trainable_weights = property(lambda self: self._l.trainable_weights)
    non_trainable_weights = property(lambda self: self._l.non_trainable_weights)

    @property
    def trainable(self):
        return self._l.trainable

    @trainable.setter
    def trainable(self, value):
        self._l.set_trainable(bool(value))

    @property
    def layers(self):
        from .models import _wrap_layer
        return [_wrap_layer(l, self._owner) for l in self._l.sublayers()]

    def __call__(self, *args, **kwargs):
        if _symbolic(list(args)) or _symbolic(kwargs):
            out = call_symbolic(self._l, args, kwargs)
            if self.__dict__.get("_first_output") is None:
                self._first_output = out  # layer.output: its first call's, as Keras's node 0
            return out
        return call_eager(self, args, kwargs)

    @property
    def output(self):
        if self._owner is not None:
            out = self._owner._m.layer_outputs(self.name)
            return out[0] if len(out) == 1 else list(out)
        if self.__dict__.get("_first_output") is None:
            raise AttributeError(f"Layer '{self.name}' has never been called and thus has no defined output.")
        return self._first_output

    def get_weights(self):
        return self._l.get_weights()

    def set_weights(self, weights):
        self._l.set_weights([np.asarray(w, dtype="float32") for w in weights])

    def count_params(self):
        return self._l.count_params()

    def get_config(self):
        return json.loads(self._l.get_config_json())

    def compute_output_shape(self, input_shape):
        many = len(input_shape) > 0 and isinstance(input_shape[0], (tuple, list))
        out = self._l.compute_output_shape(list(input_shape) if many else [input_shape])
        return out[0] if len(out) == 1 else out

    def __repr__(self):
        return f"<{self.class_name} name={self.name}, built={self.built}>"


class Cell(ConfigObject):
    """A recurrent cell (keras.layers.LSTMCell(8)): the argument of keras.layers.RNN, which runs it."""

    _class_name = None

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("name", CELLS[self._class_name])  # Keras's snake_case name
        self._config = json.loads(_kerascpp.layer_config(self._class_name, json.dumps(layer_config(self._class_name, args, kwargs))))

    def __repr__(self):
        return f"<{self._class_name} units={self._config.get('units')}>"


CELLS = {"SimpleRNNCell": "simple_rnn_cell", "LSTMCell": "lstm_cell", "GRUCell": "gru_cell",
         "StackedRNNCells": "stacked_rnn_cells"}


def _make_class(name):
    return type(name, (Cell if name in CELLS else NativeLayer,), {
        "_class_name": name, "__module__": "kerascpp.layers", "__doc__": f"keras.layers.{name}, run by kerascpp."})


CLASSES = {name: _make_class(name) for name in LAYERS}


def Input(shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, name=None, tensor=None,
          optional=False):
    """keras.Input: a symbolic input."""
    if tensor is not None:
        raise NotImplementedError("keras.Input(tensor=...) is not supported by kerascpp")
    if sparse:
        raise NotImplementedError("keras.Input(sparse=True) is not supported by kerascpp")
    if shape is None and batch_shape is None:
        raise ValueError("You must pass a `shape` argument.")
    if batch_shape is not None:
        batch_size, shape = batch_shape[0], batch_shape[1:]
    options = {"batch_size": batch_size, "optional": bool(optional)}
    if name is not None:
        options["name"] = name
    if dtype is not None:
        options["dtype"] = str(np.dtype(dtype)) if not isinstance(dtype, str) else dtype
    return _kerascpp.input_tensor([None if d is None else int(d) for d in shape], json.dumps(options))
