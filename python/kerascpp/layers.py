"""keras.layers: the built-in layers (one class per layer kerascpp runs, made in _builder.py from
kerascpp's layer list) and keras.layers.Layer for custom layers that run inside a kerascpp model.

Write a layer the Keras way and pass its class in custom_objects:

    class MyDense(kerascpp.layers.Layer):
        def __init__(self, units=3, **kwargs):
            super().__init__(**kwargs)
            self.units = units
        def build(self, input_shape):
            self.w = self.add_weight(name="kernel", shape=(input_shape[-1], self.units))
        def call(self, inputs):          # numpy arrays in, numpy arrays out
            return inputs @ self.w
        def get_config(self):
            return {**super().get_config(), "units": self.units}

    model = kerascpp.models.load_model("m.keras", custom_objects={"MyDense": MyDense})

kerascpp builds the layer from the file's config (cls.from_config), calls build() with the input
shape (None for the batch); add_weight() creates real kerascpp variables, into which the file's
weights load. call() receives read-only numpy arrays. Python layers run under the GIL.
"""
import itertools
import types

import numpy as np

from ._builder import CLASSES as _CLASSES
from ._builder import Input, NativeLayer  # noqa: F401

globals().update(_CLASSES)  # keras.layers.Dense, Conv2D, LSTM, ...: one class per layer kerascpp runs

_names = itertools.count()


class Layer:
    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        self.name = name or f"{type(self).__name__.lower()}_{next(_names)}"
        self.trainable = trainable
        self._dtype_config = dtype
        self.built = False

    # -- the Keras methods a subclass overrides
    def build(self, input_shape):
        self.built = True

    def call(self, inputs, *args, **kwargs):
        return inputs

    def compute_output_shape(self, input_shape):
        """None: kerascpp runs call() once on zeros to learn the output shape."""
        return None

    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable}
        if self._dtype_config is not None:
            config["dtype"] = self._dtype_config
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __call__(self, inputs, *args, **kwargs):
        from ._builder import _symbolic, call_symbolic
        if _symbolic([inputs, list(args)]) or _symbolic(kwargs):  # a model built in code
            return call_symbolic(_native(self), (inputs,) + args, kwargs)
        return self.call(inputs, *args, **kwargs)

    # -- weights
    def add_weight(self, name=None, shape=None, initializer=None, trainable=True, dtype=None, **kwargs):
        return _add_weight(self, name, shape, initializer, trainable)

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    @property
    def trainable_weights(self):
        return [v for v in _own(self) if v.trainable and self.trainable]

    @property
    def non_trainable_weights(self):
        return [v for v in _own(self) if not (v.trainable and self.trainable)]

    def get_weights(self):
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights):
        ws = self.weights
        if len(ws) != len(weights):
            raise ValueError(f"Layer '{self.name}' expects {len(ws)} weights. Received: {len(weights)}")
        for v, w in zip(ws, weights):
            v.assign(w)

    def count_params(self):
        return int(sum(int(np.prod(v.shape)) for v in _own(self)))


def _native(layer):
    """The kerascpp layer that runs this Python layer in models built in code (one per object: a layer
    called twice is shared). Saved models name its class; load them with custom_objects."""
    native = layer.__dict__.get("_kerascpp_native")
    if native is None:
        from . import _json, _kerascpp
        native = _kerascpp.python_layer(layer, type(layer).__name__, _json.dumps(layer.get_config()))
        layer.__dict__["_kerascpp_native"] = native
    return native


def _own(layer):
    return layer.__dict__.setdefault("_kerascpp_variables", [])


def _add_weight(layer, name, shape, initializer, trainable):
    adder = layer.__dict__.get("_kerascpp_add_weight")
    if adder is None:
        raise RuntimeError("add_weight() works while kerascpp builds the layer inside a model "
                           "(load_model / model_from_json with custom_objects)")
    own = _own(layer)
    if name is None:
        name = "variable" if not own else f"variable_{len(own)}"
    shape = tuple(int(d) for d in (shape or ()))
    var = adder(name, shape, bool(trainable))
    var.assign(_initial_value(initializer, shape))
    own.append(var)
    return var


def _initial_value(init, shape):
    """The initial value from a Keras initializer (name, config, object or callable; the file's weights
    overwrite it on load), computed by kerascpp's initializers as a built-in layer's are."""
    from . import initializers

    if init is None:
        init = "glorot_uniform"
    if isinstance(init, (int, float)):
        return np.full(shape, init, dtype="float32")
    return np.asarray(initializers.get(init)(shape, dtype="float32"), dtype="float32")


def _adopt(instance):
    """Gives a duck-typed layer object (not a subclass of Layer) what kerascpp needs: add_weight."""
    if isinstance(instance, Layer):
        return
    if not hasattr(instance, "add_weight"):
        instance.add_weight = types.MethodType(Layer.add_weight, instance)
