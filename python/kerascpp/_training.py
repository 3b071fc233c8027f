"""Model.compile / fit / evaluate / train_on_batch / test_on_batch, as in Keras 3, over the engine's
training (src/training). Data: arrays (or lists / dicts of them), or a PyDataset, generator or
tf.data.Dataset (_data.py), read one batch ahead on the engine's input thread. fit and evaluate run with
the GIL released; Python callbacks, custom layers and data sources take it back when they run."""
import json
import math

import numpy as np

from . import distribute as _distribute
from . import _data, _functions, _kerascpp, _json
from . import callbacks as callbacks_module
from . import losses as losses_module
from . import metrics as metrics_module
from . import optimizers as optimizers_module

_KERAS2_FIT_ARGS = {"max_queue_size", "workers", "use_multiprocessing"}  # accepted, no effect on arrays


def _verbose(verbose):
    return 1 if verbose == "auto" else int(verbose)


def _check_arrays(x, what):
    if x is None:
        raise ValueError(f"kerascpp trains on arrays or datasets: `{what}` must be given. Received: {what}=None")


def _batch_size(batch_size, samples, steps):
    """Keras's ArrayDataAdapter: the given batch size, else one that covers the samples in `steps`
    batches, else 32."""
    if batch_size:
        return int(batch_size)
    return max(1, math.ceil(samples / int(steps))) if steps and samples is not None else 32


def _samples(xs):
    return int(np.shape(xs[0])[0]) if xs and np.ndim(xs[0]) else None


def _validation_freq(freq):
    if isinstance(freq, int) and not isinstance(freq, bool):
        if freq < 1:
            raise ValueError(f"Expected a positive `validation_freq`. Received: validation_freq={freq}")
        return freq, []
    if isinstance(freq, (list, tuple, set)):
        return 0, sorted(int(e) for e in freq)  # 0: the listed epochs only (none for an empty list)
    raise ValueError(f"Expected `validation_freq` to be a list or int. Received: validation_freq={freq} of the "
                     f"type {type(freq)}.")


def _one_sample_weight(sample_weight, what="sample_weight"):
    if sample_weight is None or isinstance(sample_weight, np.ndarray):
        return sample_weight
    if isinstance(sample_weight, (list, tuple, dict)) and len(sample_weight) and \
            all(np.ndim(w) >= 1 for w in (sample_weight.values() if isinstance(sample_weight, dict) else sample_weight)):
        raise NotImplementedError(f"kerascpp takes one {what} array for all outputs. Received: one per output")
    return np.asarray(sample_weight, dtype="float32")


def _class_weight(class_weight):
    if not class_weight:
        return {}
    return {int(k): float(v) for k, v in class_weight.items()}


def _per_output(value, names, what):
    """A dict keyed by output name as a list in output order (None where absent)."""
    unknown = [k for k in value if k not in names]
    if unknown:
        raise ValueError(f"Unknown entries in {what} dictionary: {unknown}. Only expected following keys: {names}")
    return [value.get(n) for n in names]


def _split_metrics(entries):
    """Identifiers (None where an object goes, so that it keeps its place) and native metric objects."""
    ids, objs = [], []
    for m in entries:
        if m is None:
            continue
        kind, v = metrics_module._compile_form(m)
        if kind == "id":
            ids.append(v)
        else:
            ids.append(None)
            objs.append(v)
    return ids, objs


def _copy_metric(m):
    """A fresh metric of the same class and config (functions and identifiers as they are)."""
    if isinstance(m, metrics_module.Metric) and (m._native is None or metrics_module._runs_in_python(m)):
        try:  # as Keras copies a metric given for every output
            return type(m).from_config(m.get_config())
        except TypeError as e:
            raise TypeError(f"Metric {type(m).__name__} '{m.name}' is given for every output, so each output gets "
                            f"a copy made by from_config(get_config()), which failed: {e}. Give it a get_config() "
                            "its __init__ takes, or one metric object per output.") from e
    if isinstance(m, metrics_module.Metric):
        return metrics_module.Metric._wrap(_kerascpp.metric_get(_json.dumps(m._serialize())))
    if isinstance(m, _kerascpp.Metric):
        return _kerascpp.metric_get(_json.dumps({"class_name": m.class_name, "config": json.loads(m.get_config_json())}))
    return m


def _metrics_arg(metrics, names, shapes, what):
    """compile(metrics=...) as the engine takes it: (identifiers as JSON, objects for every output,
    objects by output name). Keras 3's forms: a list applies to the one output; with several outputs,
    a dict by output name or a list with one entry (a metric or a list) per output; a list of another
    length applies to every output, as in Keras 2. Python functions are traced for each output's shape."""
    if metrics is None:
        return "[]", [], {}
    if isinstance(metrics, dict) and "class_name" not in metrics:
        per = dict(zip(names, _per_output(metrics, names, what)))
    elif len(names) > 1 and isinstance(metrics, (list, tuple)) and len(metrics) == len(names):
        per = dict(zip(names, metrics))
    else:
        if isinstance(metrics, (str, dict, metrics_module.Metric)) or callable(metrics):
            metrics = [metrics]
        metrics = list(metrics)
        if len(metrics) == 1 and isinstance(metrics[0], (list, tuple)):
            metrics = list(metrics[0])
        if len(names) > 1 and any(_functions.is_function(m) or isinstance(m, metrics_module.Metric) and
                                  (m._native is None or metrics_module._runs_in_python(m)) for m in metrics):
            # Each output its own trace, and its own copy of the metric objects (the first the objects).
            per = {n: metrics if i == 0 else [_copy_metric(m) for m in metrics] for i, n in enumerate(names)}
        else:
            ids, objs = _split_metrics([_functions.metric(m, shapes[0]) if _functions.is_function(m) else m
                                        for m in metrics])
            return _json.dumps(ids), objs, {}
    ids, objs = {}, {}
    for (name, entry), shape in zip(per.items(), [shapes[names.index(n)] for n in per]):
        if entry is None:
            continue
        entry = list(entry) if isinstance(entry, (list, tuple)) else [entry]
        ids[name], o = _split_metrics([_functions.metric(m, shape) if _functions.is_function(m) else m for m in entry])
        if o:
            objs[name] = o
    return _json.dumps(ids), [], objs


class TrainingMixin:
    # -- compile
    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None, weighted_metrics=None,
                run_eagerly=False, steps_per_execution=1, jit_compile="auto", auto_scale_loss=True):
        names = list(self._m.output_names)
        opt_id, opt_obj = None, None
        if isinstance(optimizer, optimizers_module.Optimizer):
            opt_obj = optimizer._native
        elif isinstance(optimizer, _kerascpp.Optimizer):
            opt_obj = optimizer
        elif isinstance(optimizer, (str, dict)):
            opt_id = optimizer
        else:
            raise ValueError(f"Could not interpret optimizer identifier: {optimizer!r}")

        shapes = list(self._m.output_shapes)
        if isinstance(loss, dict) and "class_name" not in loss:
            loss = _per_output(loss, names, "loss")
        if _functions.is_python_loss(loss) and len(names) > 1:
            loss = [loss] * len(names)  # each output its own trace
        many = isinstance(loss, (list, tuple))
        if many:
            loss = [_functions.loss(l, shapes[i]) if _functions.is_python_loss(l) else l for i, l in enumerate(loss)]
        elif _functions.is_python_loss(loss):
            loss = _functions.loss(loss, shapes[0])
        forms = [losses_module._compile_form(l) if l is not None else ("id", None)
                 for l in (loss if many else [loss])]
        if all(kind == "id" for kind, _ in forms):
            loss_id, loss_objs = ([v for _, v in forms] if many else forms[0][1]), []
        else:
            if any(v is None for _, v in forms):
                raise NotImplementedError("kerascpp needs a loss for every output when losses are given as objects")
            loss_id = None
            loss_objs = [v if kind == "obj" else _kerascpp.loss_get(_json.dumps(v)) for kind, v in forms]

        if isinstance(loss_weights, dict):
            loss_weights = [1.0 if w is None else w for w in _per_output(loss_weights, names, "loss_weights")]
        loss_weights = [float(w) for w in (loss_weights or [])]

        _kerascpp.compile(self._m, _json.dumps(opt_id), opt_obj, _json.dumps(loss_id), loss_objs, loss_weights,
                          _metrics_arg(metrics, names, shapes, "metrics"),
                          _metrics_arg(weighted_metrics, names, shapes, "weighted_metrics"))
        self._optimizer = optimizer if isinstance(optimizer, optimizers_module.Optimizer) else None
        self._last_logs = None

    @property
    def compiled(self):
        return self._m.compiled

    @property
    def optimizer(self):
        native = self._m.optimizer()
        if native is None:
            return None
        if self._optimizer is None or self._optimizer._native is not native:
            self._optimizer = optimizers_module.Optimizer._wrap(native)
        return self._optimizer

    @property
    def stop_training(self):
        return self._m.stop_training

    @stop_training.setter
    def stop_training(self, value):
        self._m.stop_training = bool(value)

    def get_compile_config(self):
        return json.loads(self._m.compile_config_json()) or None

    @property
    def metrics_names(self):
        if self._last_logs is not None:
            return list(self._last_logs)
        return ["loss"] if self.compiled else []

    # -- data
    def _targets(self, y):
        _check_arrays(y, "y")
        return self._as_list(y, list(self._m.output_names), "output")

    def _standardize(self, x, y, sample_weight):
        """A dataset's batch as the engine's lists."""
        return (self._input_list(x), None if y is None else self._targets(y),
                None if sample_weight is None else _one_sample_weight(sample_weight))

    def _source(self, x, shuffle=False, steps=None, **array_args):
        return _data.source_for(x, self._standardize, shuffle, steps, **array_args)

    def _engine_callbacks(self, callbacks):
        cbs = list(callbacks or [])
        for cb in cbs:
            if hasattr(cb, "set_model"):
                cb.set_model(self)
        return [callbacks_module._for_engine(cb) for cb in cbs]

    def _result(self, logs, return_dict):
        logs = {k: v if isinstance(v, np.ndarray) else float(v) for k, v in logs.items()}  # arrays: np.float32
        self._last_logs = logs
        if return_dict:
            return logs
        # Keras 3's _flatten_metrics_in_order: the logs named by model.metrics (a name repeated, repeated),
        # then the rest sorted by key.
        order = [k for k in self._m.metrics_names() if k in logs]
        values = [logs[k] for k in order] + [logs[k] for k in sorted(logs) if k not in order]
        return values[0] if len(values) == 1 else values

    # -- training
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_batch_size=None, validation_freq=1, **kwargs):
        unknown = set(kwargs) - _KERAS2_FIT_ARGS
        if unknown:
            raise TypeError(f"fit() got unexpected keyword argument(s): {sorted(unknown)}")
        freq, freq_epochs = _validation_freq(validation_freq)
        sources = []
        try:
            if _data.is_source(x):
                if validation_split:
                    raise ValueError("`validation_split` is only supported for Tensors or NumPy arrays. "
                                     f"Found: x={type(x).__name__}")
                train = self._source(x, bool(shuffle), steps_per_epoch, y=y, sample_weight=sample_weight,
                                     class_weight=class_weight)
                sources.append(train)
                xs, ys = train, None
            else:
                _check_arrays(x, "x")
                xs, ys = self._input_list(x), self._targets(y)
            vx = vy = vsw = None
            if _data.is_source(validation_data):
                vx = self._source(validation_data, False, validation_steps)
                sources.append(vx)
            elif validation_data is not None:
                if not isinstance(validation_data, (list, tuple)) or len(validation_data) not in (2, 3):
                    raise ValueError("validation_data must be a tuple (x_val, y_val) or (x_val, y_val, "
                                     f"val_sample_weight), or a dataset. Received: {type(validation_data).__name__}")
                vx, vy = self._input_list(validation_data[0]), self._targets(validation_data[1])
                if len(validation_data) == 3:
                    vsw = _one_sample_weight(validation_data[2], "validation sample_weight")
            n = None if sources and xs is sources[0] else _samples(xs)
            n_val = _samples(vx) if vx is not None and not isinstance(vx, _data._Source) else None
            if n is not None and vx is None and validation_split:  # the split's last samples validate
                n_val = n - math.floor(n * (1.0 - validation_split))
                n -= n_val
            given = batch_size
            batch_size = _batch_size(given, n, steps_per_epoch)
            validation_batch_size = validation_batch_size or _batch_size(given, n_val, validation_steps)
            engine = self._engine_callbacks(callbacks)
            native = _kerascpp.fit(self._m, xs, ys, batch_size, int(epochs), _verbose(verbose), engine,
                                   float(validation_split), vx, vy, vsw, bool(shuffle), _class_weight(class_weight),
                                   _one_sample_weight(sample_weight), int(initial_epoch), self._rnn_states(),
                                   from_source=bool(sources) and xs is sources[0],
                                   validation_from_source=isinstance(vx, _data._Source),
                                   steps_per_epoch=int(steps_per_epoch or 0), validation_steps=int(validation_steps or 0),
                                   validation_batch_size=int(validation_batch_size or 0), validation_freq=freq,
                                   validation_epochs=freq_epochs, distributed=_distribute._context_of(self))
        finally:
            for source in sources:
                source.close()
        history = callbacks_module.History()
        history.set_model(self)
        history.set_params(native.params)
        history.epoch = list(native.epoch)
        history.history = {k: list(v) for k, v in sorted(native.history.items())}  # logs' (sorted) order
        self.history = history
        self._last_logs = {k: v[-1] for k, v in history.history.items() if not k.startswith("val_")} or None
        return history

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False, **kwargs):
        unknown = set(kwargs) - _KERAS2_FIT_ARGS
        if unknown:
            raise TypeError(f"evaluate() got unexpected keyword argument(s): {sorted(unknown)}")
        engine = self._engine_callbacks(callbacks)
        if _data.is_source(x):
            source = self._source(x, False, steps, y=y, sample_weight=sample_weight)
            try:
                logs = _kerascpp.evaluate(self._m, source, None, 0, _verbose(verbose), None, engine, self._rnn_states(),
                                          from_source=True, steps=int(steps or 0),
                                          distributed=_distribute._context_of(self))
            finally:
                source.close()
            return self._result(logs, return_dict)
        _check_arrays(x, "x")
        xs, ys = self._input_list(x), self._targets(y)
        logs = _kerascpp.evaluate(self._m, xs, ys, _batch_size(batch_size, _samples(xs), steps), _verbose(verbose),
                                  _one_sample_weight(sample_weight), engine, self._rnn_states(), steps=int(steps or 0),
                                  distributed=_distribute._context_of(self))
        return self._result(logs, return_dict)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        logs = _kerascpp.train_on_batch(self._m, self._input_list(x), self._targets(y),
                                        _one_sample_weight(sample_weight), _class_weight(class_weight),
                                        self._rnn_states())
        return self._result(logs, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        logs = _kerascpp.test_on_batch(self._m, self._input_list(x), self._targets(y),
                                       _one_sample_weight(sample_weight), self._rnn_states())
        return self._result(logs, return_dict)
