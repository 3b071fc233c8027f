"""keras.callbacks for kerascpp's fit / evaluate.

Subclass Callback and override the hooks you need, as in Keras; fit calls them (taking the GIL) with
logs as a dict, and numbers the callback puts into logs go back into fit's logs. self.model is the
kerascpp Model (self.model.stop_training = True ends fit after the epoch). The built-in callbacks
(EarlyStopping, ModelCheckpoint, ...) run inside the engine and cost no Python per batch.
"""
import os

from . import _json, _kerascpp

_HOOKS = ("on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "on_train_batch_begin",
          "on_train_batch_end", "on_test_begin", "on_test_end", "on_test_batch_begin", "on_test_batch_end")
_ALIASES = {"on_train_batch_begin": "on_batch_begin", "on_train_batch_end": "on_batch_end"}


class Callback:
    model = None
    params = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self.model = model

    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_batch_begin(self, batch, logs=None): pass
    def on_batch_end(self, batch, logs=None): pass
    def on_test_begin(self, logs=None): pass
    def on_test_end(self, logs=None): pass
    def on_test_batch_begin(self, batch, logs=None): pass
    def on_test_batch_end(self, batch, logs=None): pass
    def on_predict_begin(self, logs=None): pass
    def on_predict_end(self, logs=None): pass
    def on_predict_batch_begin(self, batch, logs=None): pass
    def on_predict_batch_end(self, batch, logs=None): pass

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)


class _NativeCallback(Callback):
    """A callback the engine runs (self._native); a Python subclass may override hooks and call
    super(), which runs the engine's hook on the same logs."""

    def on_train_begin(self, logs=None): self._native.on_train_begin(logs)
    def on_train_end(self, logs=None): self._native.on_train_end(logs)
    def on_epoch_begin(self, epoch, logs=None): self._native.on_epoch_begin(epoch, logs)
    def on_epoch_end(self, epoch, logs=None): self._native.on_epoch_end(epoch, logs)
    def on_batch_begin(self, batch, logs=None): self._native.on_train_batch_begin(batch, logs)
    def on_batch_end(self, batch, logs=None): self._native.on_train_batch_end(batch, logs)
    def on_test_begin(self, logs=None): self._native.on_test_begin(logs)
    def on_test_end(self, logs=None): self._native.on_test_end(logs)
    def on_test_batch_begin(self, batch, logs=None): self._native.on_test_batch_begin(batch, logs)
    def on_test_batch_end(self, batch, logs=None): self._native.on_test_batch_end(batch, logs)


def _base_functions(name):
    return {getattr(c, name, None) for c in (Callback, _NativeCallback)} - {None}


_BASE = {h: _base_functions(h) for h in _HOOKS + tuple(_ALIASES.values())}


def _overrides(cb, hook):
    f = getattr(cb, hook, None)  # instance attributes count (LambdaCallback)
    if f is None:
        return False
    return getattr(f, "__func__", f) not in _BASE[hook]


def _for_engine(cb):
    """What fit hands the engine for a callback: the engine's own callback when Python adds nothing,
    else a PyCallback that calls the Python hooks this callback overrides."""
    hooks = [h for h in _HOOKS if _overrides(cb, h) or h in _ALIASES and _overrides(cb, _ALIASES[h])]
    native = getattr(cb, "_native", None)
    if native is not None and not hooks:
        return native
    return _kerascpp.PyCallback(cb, hooks, native)


class History(Callback):
    def __init__(self):
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)


class LambdaCallback(Callback):
    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **kwargs):
        self.__dict__.update(kwargs)  # on_batch_begin, on_test_begin... as Keras allows
        for name, fn in [("on_epoch_begin", on_epoch_begin), ("on_epoch_end", on_epoch_end),
                         ("on_train_begin", on_train_begin), ("on_train_end", on_train_end),
                         ("on_train_batch_begin", on_train_batch_begin), ("on_train_batch_end", on_train_batch_end)]:
            if fn is not None:
                setattr(self, name, fn)


class ModelCheckpoint(_NativeCallback):
    def __init__(self, filepath, *args, **kwargs):
        kw = _json.kwargs_of(("monitor", "verbose", "save_best_only", "save_weights_only", "mode", "save_freq",
                              "initial_value_threshold"), args, kwargs, "ModelCheckpoint")
        self.filepath = os.fspath(filepath)
        self.monitor = kw.get("monitor", "val_loss")
        self._native = _kerascpp.ModelCheckpoint(self.filepath, _json.dumps(kw))

    best = property(lambda self: self._native.best)


class EarlyStopping(_NativeCallback):
    def __init__(self, *args, **kwargs):
        kw = _json.kwargs_of(("monitor", "min_delta", "patience", "verbose", "mode", "baseline",
                              "restore_best_weights", "start_from_epoch"), args, kwargs, "EarlyStopping")
        self.monitor = kw.get("monitor", "val_loss")
        self.patience = kw.get("patience", 0)
        self._native = _kerascpp.EarlyStopping(_json.dumps(kw))

    stopped_epoch = property(lambda self: self._native.stopped_epoch)


class ReduceLROnPlateau(_NativeCallback):
    def __init__(self, *args, **kwargs):
        kw = _json.kwargs_of(("monitor", "factor", "patience", "verbose", "mode", "min_delta", "cooldown",
                              "min_lr"), args, kwargs, "ReduceLROnPlateau")
        self.monitor = kw.get("monitor", "val_loss")
        self._native = _kerascpp.ReduceLROnPlateau(_json.dumps(kw))


def _schedule_caller(schedule):
    """Keras calls schedule(epoch, lr), or schedule(epoch) for a one-argument function."""
    def call(epoch, lr):
        try:
            lr = schedule(epoch, lr)
        except TypeError:
            lr = schedule(epoch)
        try:
            return float(lr)
        except (TypeError, ValueError):
            raise ValueError(f"The output of the `schedule` function should be a float. Got: {lr!r}") from None
    return call


class LearningRateScheduler(_NativeCallback):
    def __init__(self, schedule, verbose=0):
        self.schedule, self.verbose = schedule, verbose
        # The engine holds the schedule, never this object (no cycle the garbage collector cannot see).
        self._native = _kerascpp.LearningRateScheduler(_schedule_caller(schedule), int(verbose))


class CSVLogger(_NativeCallback):
    def __init__(self, filename, separator=",", append=False):
        self.filename, self.sep, self.append = os.fspath(filename), separator, append
        self._native = _kerascpp.CSVLogger(self.filename, separator, bool(append))


class TensorBoard(_NativeCallback):
    """Event files TensorBoard reads, written by the engine as Keras 3 writes them (tf.summary's tensor
    summaries): log_dir/train and log_dir/validation. write_graph writes the model's config (the graph
    plugin's conceptual graph); there is no TensorFlow op graph. write_images and profile_batch are refused."""

    def __init__(self, *args, **kwargs):
        kw = _json.kwargs_of(("log_dir", "histogram_freq", "write_graph", "write_images", "write_steps_per_second",
                              "update_freq", "profile_batch", "embeddings_freq", "embeddings_metadata"),
                             args, kwargs, "TensorBoard")
        if "log_dir" in kw:
            kw["log_dir"] = os.fspath(kw["log_dir"])
        self.log_dir = kw.get("log_dir", "logs")
        self.histogram_freq = kw.get("histogram_freq", 0)
        self.update_freq = kw.get("update_freq", "epoch")
        self._native = _kerascpp.TensorBoard(_json.dumps(kw))


class BackupAndRestore(_NativeCallback):
    """Backs up the weights, the optimizer's state and the epoch in backup_dir, and resumes an
    interrupted fit from there when it is started again with the same backup_dir."""

    def __init__(self, backup_dir, *args, **kwargs):
        kw = _json.kwargs_of(("save_freq", "double_checkpoint", "delete_checkpoint"), args, kwargs, "BackupAndRestore")
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = kw.get("save_freq", "epoch")
        self._native = _kerascpp.BackupAndRestore(self.backup_dir, _json.dumps(kw))


class ProgbarLogger(_NativeCallback):
    """Keras 3's progress bar, drawn by the engine. Given in callbacks, it is fit's bar (fit adds none),
    drawn as fit's verbose asks (nothing with verbose=0)."""

    def __init__(self):
        self._native = _kerascpp.ProgbarLogger()


class TerminateOnNaN(_NativeCallback):
    def __init__(self):
        self._native = _kerascpp.TerminateOnNaN()


class WeightHistory(_NativeCallback):
    """kerascpp's own: appends the model's weights every `every` epochs to an HDF5 file, one dataset
    per weight of shape (snapshots, *weight shape) plus "epoch"; each snapshot costs the bytes of the
    weights, however long training has run."""

    def __init__(self, filename, every=1):
        self.filename, self.every = os.fspath(filename), int(every)
        self._native = _kerascpp.WeightHistory(self.filename, self.every)
