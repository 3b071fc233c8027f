"""keras.models over the kerascpp engine: load_model, model_from_json and Model."""
import json
import os
import warnings

import numpy as np

from . import distribute as _distribute
from . import _data, _kerascpp
from ._builder import CLASSES, KerasTensor, NativeLayer, _next_seed, _symbolic, call_symbolic
from ._training import TrainingMixin, _batch_size, _samples

# load_model's limits by default (C++ LoadLimits): a file asking for more is refused.
LOAD_LIMITS = _kerascpp.load_limits()


def _wrap_layer(layer, owner):
    py = _kerascpp.python_instance(layer)  # custom layers: the user's own object
    if py is not None:
        return py
    if layer.class_name in ("Functional", "Sequential"):  # a nested model is a Model, as in Keras
        return Model(_kerascpp.model_of_graph(layer))
    return CLASSES.get(layer.class_name, NativeLayer)._of(layer, owner)


def _flat(struct, what):
    """A model's inputs or outputs as (tensors, single, dict keys), as Keras keeps their nesting."""
    if isinstance(struct, KerasTensor):
        return [struct], True, []
    if isinstance(struct, dict):
        keys = sorted(struct)
        items = [struct[k] for k in keys]
    elif isinstance(struct, (list, tuple)):
        keys, items = [], list(struct)
    else:
        raise ValueError(f"All `{what}` values must be KerasTensors. Received: {what}={struct!r}")
    for t in items:
        if not isinstance(t, KerasTensor):
            raise ValueError(f"All `{what}` values must be KerasTensors. Received: {what}={struct!r} including "
                             f"invalid value {t!r} of type {type(t)}")
    return items, False, keys


def _single(x):
    return hasattr(x, "shape") and hasattr(x, "dtype") or np.ndim(x) > 0 and not isinstance(x, (list, tuple))


class Model(TrainingMixin):
    """A Keras model run by kerascpp. predict() and __call__ are safe from many threads; compile,
    fit and evaluate train it natively (python/kerascpp/_training.py)."""

    def __init__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], _kerascpp.Model):
            native = args[0]
        else:  # keras.Model(inputs, outputs, name=None, trainable=True)
            names = ["inputs", "outputs", "name", "trainable"]
            given = dict(zip(names, args), **kwargs)
            unknown = [k for k in given if k not in names]
            if unknown or "inputs" not in given or "outputs" not in given:
                raise TypeError("kerascpp builds a Model from keras.Input tensors and the outputs of layers called "
                                f"on them: keras.Model(inputs, outputs, name=None). Received: {sorted(given)}")
            ins, in_single, in_keys = _flat(given["inputs"], "inputs")
            outs, out_single, out_keys = _flat(given["outputs"], "outputs")
            native = _kerascpp.functional(ins, outs, given.get("name") or "", in_single, in_keys, out_single, out_keys)
            if given.get("trainable") is False:
                native.as_layer().set_trainable(False)
        self._m = native
        self._optimizer = None
        self._last_logs = None
        self.history = None
        self._distribute_strategy = _distribute.get_strategy()  # fit trains under the scope it was made in

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
        if type(x) is np.ndarray and steps is None:  # one array, the common case: straight to the engine
            return self._outputs(self._m.predict([x], _batch_size(batch_size, None, None), self._rnn_states()))
        if _data.is_source(x):  # each batch's x (targets are ignored), read ahead on the engine's input thread
            if self._m.stateful:
                raise NotImplementedError(f"Model '{self.name}' has stateful layers: kerascpp predicts it from arrays")
            source = _data.source_for(x, lambda x, y, sw: (self._input_list(x), None, None), False, steps)
            try:
                return self._outputs(_kerascpp.predict_source(self._m, source, int(steps or 0)))
            finally:
                source.close()
        xs = self._input_list(x)
        batch_size = _batch_size(batch_size, _samples(xs), steps)
        if steps is not None:  # the first `steps` batches, as Keras
            xs = [np.asarray(a)[:int(steps) * batch_size] for a in xs]
        return self._outputs(self._m.predict(xs, batch_size, self._rnn_states()))

    def __call__(self, inputs, training=None, mask=None):
        if type(inputs) is np.ndarray and not training and mask is None:  # the common case, with no detours
            return self._outputs(self._m.call([inputs], None, self._rnn_states()))
        if _symbolic(inputs):  # a model called on symbolic tensors is a layer of a new model
            if isinstance(inputs, dict):  # by input name, as Keras maps a dict onto a model's inputs
                inputs = self._as_list(inputs, list(self._m.input_names), "input")
            kwargs = {} if mask is None else {"mask": mask}
            if training is not None:  # saved with the call, as Keras does; kerascpp's step decides the mode
                kwargs["training"] = bool(training)
            return call_symbolic(self._m.as_layer(), [inputs], kwargs)
        if training:  # Dropout, noise and augmentation act; their draws from kerascpp's seeded generator
            if mask is not None or self._m.stateful:
                raise NotImplementedError(f"Model '{self.name}' called with training=True takes no mask and "
                                          "no stateful layers in kerascpp")
            seed = _next_seed()
            seed = int(np.random.default_rng().integers(0, 2**63 - 1)) if seed is None else seed
            return self._outputs(self._m.call_training(self._input_list(inputs), seed))
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
        return list(self._m.inputs())

    @property
    def outputs(self):
        return list(self._m.outputs())

    @property
    def trainable(self):
        return self._m.as_layer().trainable

    @trainable.setter
    def trainable(self, value):
        self._m.as_layer().set_trainable(bool(value))

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
        """Any Keras weights file; by_name / skip_mismatch (legacy .h5) as Keras 2's, for transfer learning."""
        self._m.load_weights(os.fspath(filepath), bool(by_name), bool(skip_mismatch))

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The model of get_config()'s config (Functional, or Sequential when it lists no input layers)."""
        class_name = "Functional" if "input_layers" in config else "Sequential"
        return model_from_config({"class_name": class_name, "config": config}, custom_objects)

    @property
    def training_config(self):
        return json.loads(self._m.training_config_json())

    def __repr__(self):
        return f"<kerascpp.Model name={self.name}, inputs={self._m.input_shapes}, outputs={self._m.output_shapes}>"


class Sequential(Model):
    """keras.Sequential: layers chained in order. The model is built as soon as its input is known (a
    keras.Input first, a first layer's input_shape, build(input_shape), or the first data it sees);
    compile() before that waits for it."""

    def __init__(self, layers=None, trainable=True, name=None):
        self._entries, self._name, self._pending_compile = [], name, None
        self._m, self._optimizer, self._last_logs, self.history = None, None, None, None
        self._distribute_strategy = _distribute.get_strategy()
        self._trainable = trainable
        for layer in layers or []:
            self._entries.append(layer)
        self._rebuild()

    def add(self, layer):
        self._entries.append(layer)
        self._rebuild()

    def pop(self):
        if not [e for e in self._entries if not isinstance(e, KerasTensor)]:
            raise TypeError("There are no layers in the model.")
        layer = self._entries.pop()
        self._rebuild()
        return layer

    def build(self, input_shape=None):
        if self._m is None and input_shape is not None:
            self._rebuild(tuple(input_shape)[1:])

    def _natives(self):
        out = []
        for e in self._entries:
            if isinstance(e, KerasTensor):
                out.append(e._layer)
            elif isinstance(e, Model):
                out.append(e._m.as_layer())
            elif isinstance(e, NativeLayer):
                out.append(e._l)
            else:
                raise NotImplementedError(f"kerascpp's Sequential takes keras.Input, built-in layers and models; "
                                          f"received {e!r}")
        return out

    def _rebuild(self, input_shape=None):
        natives = self._natives()
        if not natives:
            self._m = None
            return
        first = self._entries[0]
        if input_shape is None and not isinstance(first, KerasTensor) and getattr(first, "_input_shape_arg", None):
            input_shape = first._input_shape_arg
        if input_shape is None and not isinstance(first, KerasTensor):
            if self._m is None:
                return  # built later, from the first data or build()
            input_shape = self._m.input_shapes[0][1:]
        if input_shape is not None and not isinstance(first, KerasTensor):
            natives.insert(0, _kerascpp.input_tensor(list(input_shape), "{}")._layer)
        was_compiled = self._m is not None and self._m.compiled and getattr(self, "_compile_args", None)
        from ._builder import _next_seed
        self._m = _kerascpp.sequential(natives, self._name or "", _next_seed())
        self._name = self._m.name
        if was_compiled and self._pending_compile is None:
            self._pending_compile = self._compile_args
        if not self._trainable:
            self._m.as_layer().set_trainable(False)
        if self._pending_compile is not None:
            args, kwargs = self._pending_compile
            self._pending_compile = None
            self.compile(*args, **kwargs)

    def _built_for(self, x):
        """Builds a deferred Sequential from the data's shape; returns x (a generator: the same batches,
        the first one read to build)."""
        if self._m is None and x is not None:
            if _data.is_source(x):
                x, first = _data.peek_x(x)
            else:
                first = x
            first = first[0] if isinstance(first, (list, tuple)) else first
            self._rebuild(tuple(np.shape(first))[1:])
        if self._m is None:
            raise ValueError(f"Sequential model '{self.name}' has not been built: give it an input (keras.Input "
                             "first, or build(input_shape)) or data")
        return x

    @property
    def name(self):
        return self._m.name if self._m is not None else (self._name or "sequential")

    @property
    def layers(self):
        if self._m is None:
            return [e for e in self._entries if not isinstance(e, KerasTensor)]
        return super().layers

    def compile(self, *args, **kwargs):
        self._compile_args = (args, kwargs)  # add() / pop() rebuild the model: compiled again as it was
        if self._m is None:
            self._pending_compile = (args, kwargs)
            return
        super().compile(*args, **kwargs)

    def predict(self, x, *args, **kwargs):
        return super().predict(self._built_for(x), *args, **kwargs)

    def fit(self, x=None, y=None, *args, **kwargs):
        return super().fit(self._built_for(x), y, *args, **kwargs)

    def evaluate(self, x=None, y=None, *args, **kwargs):
        return super().evaluate(self._built_for(x), y, *args, **kwargs)

    def __call__(self, inputs, training=None, mask=None):
        if not _symbolic(inputs):
            self._built_for(inputs)
        elif self._m is None:
            self._rebuild(tuple(inputs.shape[1:]))
        return super().__call__(inputs, training=training, mask=mask)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True, mmap=False, **limits):
    """Loads a Keras model file (.keras, or legacy .h5 from Keras 2 or 3). The GIL is released while
    the file is read. A Lambda's function comes from custom_objects (under its name or the layer's), or
    is a Keras backend function kerascpp knows by name; the Python code stored in the file runs only
    with safe_mode=False, as in Keras.

    limits: what the file may ask for, checked before memory is taken (C++ LoadLimits; the defaults
    are in kerascpp.models.LOAD_LIMITS): max_config_bytes, max_json_depth, max_layers, max_nodes,
    max_weight_bytes (0: four times the file's weights plus 16 MiB), max_rank, max_tensor_elements,
    max_member_bytes, max_compression_ratio. A file over one is refused with a ValueError naming the
    member or layer, the value and the limit. allow_libhdf5=False, for files from untrusted sources,
    keeps libhdf5 (which trusts the bytes it reads) out: every HDF5 file is read by kerascpp's own
    bounds-checked reader, and one outside the subset Keras writes is refused with an OSError.

    mmap=True (C++ LoadOptions::mmap_weights) maps the file and makes each weight a view of it instead
    of a copy: loading a large model then costs about parsing it, and the weights' memory is the page
    cache's, shared with every process reading the file, until training writes it (the pages written
    are copied; the file never changes). The model then depends on the file while it lives: overwriting
    the file in place (Keras's save and ModelCheckpoint, cp) changes its weights, truncating it kills the
    process with SIGBUS. Replacing it by a rename (kerascpp's saves, mv) or deleting it is safe."""
    m = Model(_kerascpp.load_model(os.fspath(filepath), bool(compile), custom_objects, bool(safe_mode),
                                   _training_objects(custom_objects), limits, bool(mmap)))
    if compile and not m._m.compiled and m.training_config:  # (training_config is a JSON round trip)
        _compile_from_training_config(m)
    return m


def _training_objects(custom_objects):
    """load_model's maker of the saved compile config's losses, metrics and learning-rate schedule that
    are the user's: their functions and classes from custom_objects, found as Keras finds them (a class
    by its registered or class name, from its config; a function by its name), traced or wrapped for
    the output's shape as compile() does. None: kerascpp's own."""
    if not custom_objects:
        return None
    from . import _functions, _schedules, metrics as metrics_module

    def resolve(kind, entry_json, shape):
        entry = json.loads(entry_json)
        config = None
        if isinstance(entry, str):
            names = [entry]
        elif isinstance(entry, dict) and entry.get("class_name") == "function":
            names = [entry.get("config")]
        elif isinstance(entry, dict):
            names, config = [entry.get("registered_name"), entry.get("class_name")], entry.get("config") or {}
        else:
            return None
        obj = next((custom_objects[n] for n in names if isinstance(n, str) and n in custom_objects), None)
        if obj is None:
            return None
        if isinstance(obj, type):
            obj = obj.from_config(config) if config is not None else obj()
        if kind == "schedule":
            if isinstance(obj, _schedules.LearningRateSchedule):
                return _kerascpp.schedule_from_python(obj) if obj._runs_in_python() else obj._native
            return None
        if kind == "loss":
            return _functions.loss(obj, shape) if _functions.is_python_loss(obj) else getattr(obj, "_native", None)
        if _functions.is_function(obj):
            return _functions.metric(obj, shape)
        return metrics_module._compile_form(obj)[1] if isinstance(obj, metrics_module.Metric) else None

    return resolve


def _compile_from_training_config(model):
    """Keras compiles a loaded model from the compile config in its file; kerascpp tries the same
    from the optimizer, loss and metrics recorded there, and warns as Keras does when it cannot."""
    tc = model.training_config
    optimizer = tc.get("optimizer", tc.get("optimizer_config")) or "rmsprop"
    metrics = tc.get("metrics") or []
    if len(metrics) == 1 and isinstance(metrics[0], list):  # Keras 2: one list per output
        metrics = metrics[0]
    try:
        model.compile(optimizer=optimizer, loss=tc.get("loss"), metrics=metrics, loss_weights=tc.get("loss_weights"),
                      weighted_metrics=tc.get("weighted_metrics"))
    except (ValueError, TypeError, NotImplementedError) as e:
        warnings.warn(f"kerascpp could not compile the loaded model from its training config ({e}). Call "
                      "model.compile() before training.", stacklevel=3)


def clone_model(model, input_tensors=None, clone_function=None):
    """keras.models.clone_model: the same architecture with new weights (from its initializers)."""
    if input_tensors is not None or clone_function is not None:
        raise NotImplementedError("clone_model(input_tensors=..., clone_function=...) is not supported by kerascpp")
    return model_from_config(json.loads(model._m.get_config_json()))


def model_from_json(json_string, custom_objects=None, safe_mode=True):
    """A model from model.to_json() of any Keras; its weights are zero until load_weights()."""
    if not isinstance(json_string, str):
        raise TypeError(f"model_from_json expects a str. Received: {type(json_string).__name__}")
    return Model(_kerascpp.model_from_json(json_string, custom_objects, bool(safe_mode)))


def model_from_config(config, custom_objects=None, safe_mode=True):
    return model_from_json(json.dumps(config), custom_objects, safe_mode)
