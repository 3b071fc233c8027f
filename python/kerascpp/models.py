"""keras.models over the kerascpp engine: load_model, model_from_json and Model."""
import json
import os
import warnings

import numpy as np

from . import _kerascpp
from ._training import TrainingMixin


class KerasTensor:
    """What model.inputs / model.outputs hold: a name, a shape (None for unknown) and a dtype."""

    def __init__(self, name, shape, dtype="float32"):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, name={self.name}>"


class LayerView:
    """A built-in layer of a model (the model stays alive while a view of it exists)."""

    def __init__(self, layer, owner):
        self._l, self._owner = layer, owner

    name = property(lambda self: self._l.name)
    trainable = property(lambda self: self._l.trainable)
    built = property(lambda self: self._l.built)
    weights = property(lambda self: self._l.weights)
    trainable_weights = property(lambda self: self._l.trainable_weights)
    non_trainable_weights = property(lambda self: self._l.non_trainable_weights)

    @property
    def layers(self):
        return [_wrap_layer(l, self._owner) for l in self._l.sublayers()]

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

    @property
    def class_name(self):
        return self._l.class_name

    def __repr__(self):
        return f"<{self._l.class_name} name={self._l.name}>"


def _wrap_layer(layer, owner):
    py = _kerascpp.python_instance(layer)  # custom layers: the user's own object
    return py if py is not None else LayerView(layer, owner)


def _single(x):
    return hasattr(x, "shape") and hasattr(x, "dtype") or np.ndim(x) > 0 and not isinstance(x, (list, tuple))


class Model(TrainingMixin):
    """A Keras model run by kerascpp. predict() and __call__ are safe from many threads; compile,
    fit and evaluate train it natively (python/kerascpp/_training.py)."""

    def __init__(self, _model):
        if not isinstance(_model, _kerascpp.Model):
            raise NotImplementedError("kerascpp builds models from Keras files and configs only: use "
                                      "kerascpp.models.load_model or model_from_json")
        self._m = _model
        self._optimizer = None
        self._last_logs = None
        self.history = None

    # -- running
    def _input_list(self, x):
        return self._as_list(x, list(self._m.input_names), "input")

    def _as_list(self, x, names, what):
        if isinstance(x, dict):
            missing = [n for n in names if n not in x]
            if missing:
                raise ValueError(f"Missing data for {what}(s) {missing} of model '{self.name}'. "
                                 f"Expected keys {names}. Received: {list(x)}")
            return [x[n] for n in names]
        if isinstance(x, (list, tuple)):
            if len(names) > 1 or (len(x) == 1 and _single(x[0])):
                return list(x)
        return [x]

    def _outputs(self, out):
        return out[0] if len(out) == 1 else out

    def _rnn_states(self):
        # A stateful model's states live with this Python model, as Keras keeps them in its layers
        # (the C++ model stays shared and const; each Python model is one stream).
        if not self._m.stateful:
            return None
        if getattr(self, "_states", None) is None:
            self._states = _kerascpp.RnnStates()
        return self._states

    def reset_states(self):
        if getattr(self, "_states", None) is not None:
            self._states.reset_states()

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        return self._outputs(self._m.predict(self._input_list(x), int(batch_size or 32), self._rnn_states()))

    def __call__(self, inputs, training=None, mask=None):
        # mask: one per input (None for an input without one), as the inputs are given.
        masks = None
        if mask is not None:
            names = list(self._m.input_names)
            listed = isinstance(mask, (list, tuple)) and len(mask) == len(names) and (
                len(names) > 1 or mask[0] is None or _single(mask[0]))
            masks = [None if m is None else np.asarray(m, dtype="float32")
                     for m in (list(mask) if listed else self._as_list(mask, names, "mask"))]
        return self._outputs(self._m.call(self._input_list(inputs), masks, self._rnn_states()))

    def predict_on_batch(self, x):
        return self(x)

    # -- weights
    @property
    def weights(self):
        return self._m.weights()

    @property
    def trainable_weights(self):
        return self._m.trainable_weights()

    @property
    def non_trainable_weights(self):
        return self._m.non_trainable_weights()

    variables = weights

    def get_weights(self):
        return self._m.get_weights()

    def set_weights(self, weights):
        self._m.set_weights(list(weights))

    def count_params(self):
        return self._m.count_params()

    # -- structure
    @property
    def name(self):
        return self._m.name

    @property
    def layers(self):
        return [_wrap_layer(l, self) for l in self._m.layers()]

    def get_layer(self, name=None, index=None):
        if index is not None and name is not None:
            raise ValueError("Provide only a layer name or a layer index. Received: "
                             f"index={index}, name={name}.")
        if index is not None:
            return _wrap_layer(self._m.get_layer(int(index)), self)
        if name is not None:
            return _wrap_layer(self._m.get_layer(str(name)), self)
        raise ValueError("Provide either a layer name or layer index at `get_layer`.")

    @property
    def input_names(self):
        return list(self._m.input_names)

    @property
    def output_names(self):
        return list(self._m.output_names)

    @property
    def inputs(self):
        return [KerasTensor(n, s) for n, s in zip(self._m.input_names, self._m.input_shapes)]

    @property
    def outputs(self):
        return [KerasTensor(n, s) for n, s in zip(self._m.output_names, self._m.output_shapes)]

    @property
    def input_shape(self):
        s = self._m.input_shapes
        return s[0] if len(s) == 1 else s

    @property
    def output_shape(self):
        s = self._m.output_shapes
        return s[0] if len(s) == 1 else s

    @property
    def input(self):
        i = self.inputs
        return i[0] if len(i) == 1 else i

    @property
    def output(self):
        o = self.outputs
        return o[0] if len(o) == 1 else o

    def summary(self, line_length=None, positions=None, print_fn=None, **kwargs):
        (print_fn or print)(self._m.summary())

    def get_config(self):
        return json.loads(self._m.get_config_json())["config"]

    def to_json(self, keras2=False, **kwargs):
        return self._m.to_json(keras2)

    # -- files
    def save(self, filepath, overwrite=True, keras2=False, **kwargs):
        self._m.save(os.fspath(filepath), keras2)

    def save_weights(self, filepath, overwrite=True, keras2=False, **kwargs):
        self._m.save_weights(os.fspath(filepath), keras2)

    def load_weights(self, filepath, skip_mismatch=False, by_name=False, **kwargs):
        if skip_mismatch or by_name:
            raise NotImplementedError("load_weights(skip_mismatch=True / by_name=True) is not supported by kerascpp")
        self._m.load_weights(os.fspath(filepath))

    @property
    def training_config(self):
        return json.loads(self._m.training_config_json())

    def __repr__(self):
        return f"<kerascpp.Model name={self.name}, inputs={self._m.input_shapes}, outputs={self._m.output_shapes}>"


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Loads a Keras model file (.keras, or legacy .h5 from Keras 2 or 3). The GIL is released while
    the file is read. Lambda functions are taken from custom_objects only, never from the file."""
    m = Model(_kerascpp.load_model(os.fspath(filepath), bool(compile), custom_objects))
    if compile and m.training_config and not m._m.compiled:
        _compile_from_training_config(m)
    return m


def _compile_from_training_config(model):
    """Keras compiles a loaded model from the compile config in its file; kerascpp tries the same
    from the optimizer, loss and metrics recorded there, and warns as Keras does when it cannot."""
    tc = model.training_config
    optimizer = tc.get("optimizer", tc.get("optimizer_config")) or "rmsprop"
    metrics = tc.get("metrics") or []
    if len(metrics) == 1 and isinstance(metrics[0], list):  # Keras 2: one list per output
        metrics = metrics[0]
    try:
        model.compile(optimizer=optimizer, loss=tc.get("loss"), metrics=metrics, loss_weights=tc.get("loss_weights"))
    except (ValueError, TypeError, NotImplementedError) as e:
        warnings.warn(f"kerascpp could not compile the loaded model from its training config ({e}). Call "
                      "model.compile() before training.", stacklevel=3)


def model_from_json(json_string, custom_objects=None):
    """A model from model.to_json() of any Keras; its weights are zero until load_weights()."""
    if not isinstance(json_string, str):
        raise TypeError(f"model_from_json expects a str. Received: {type(json_string).__name__}")
    return Model(_kerascpp.model_from_json(json_string, custom_objects))


def model_from_config(config, custom_objects=None):
    return model_from_json(json.dumps(config), custom_objects)
