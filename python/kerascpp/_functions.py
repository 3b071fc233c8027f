"""Losses and metrics written as Python functions of keras.ops (compile(loss=my_loss), metrics=[my_metric]).

Keras calls such a function on every batch inside its traced train step. kerascpp traces it at compile,
on symbolic y_true and y_pred of the output's shape (y_true as float32, as Keras casts it), into a small
model the engine runs on every batch, differentiating it as any layer; labels of another shape (sparse
labels) get it traced again for theirs, once, as Keras traces per shape. A function that cannot be
traced (it converts tensors to numpy, or branches on their values) is refused by name."""
import json

from . import _kerascpp


def _name(fn):
    return getattr(fn, "__name__", None) or getattr(fn, "name", None) or type(fn).__name__


def _serialized(obj):
    """How Keras 3's compile_config records a function, or a Loss subclass (its class and config)."""
    if is_function(obj):
        return {"module": "builtins", "class_name": "function", "config": _name(obj), "registered_name": "function"}
    config = obj.get_config() if hasattr(obj, "get_config") else {"name": _name(obj)}
    return {"module": type(obj).__module__, "class_name": type(obj).__name__, "config": config,
            "registered_name": type(obj).__name__}


def _trace(fn, y_pred_shape, what, y_true_shape=None):
    from .layers import Input
    from .models import Model
    shape = tuple(y_pred_shape[1:])
    true_shape = shape if y_true_shape is None else tuple(y_true_shape[1:])
    y_true, y_pred = Input(true_shape, name="y_true"), Input(shape, name="y_pred")
    try:
        out = fn(y_true, y_pred)
        return Model([y_true, y_pred], out)
    except Exception as e:  # noqa: BLE001 - any failure of the user's function while tracing
        raise NotImplementedError(
            f"kerascpp runs the Python {what} {_name(fn)} by tracing it with keras.ops on symbolic y_true of shape "
            f"{(None,) + true_shape} and y_pred of shape {(None,) + shape}, and it could not be traced "
            f"({type(e).__name__}: {e}). Write it with keras.ops only, or use a built-in {what}.") from e


def is_function(obj):
    """A plain callable: not a kerascpp Loss / Metric object, a native one, or one of Keras's named functions."""
    return (callable(obj) and not hasattr(obj, "_native") and not hasattr(obj, "_kerascpp_identifier")
            and not isinstance(obj, (_kerascpp.Loss, _kerascpp.Metric)))


def is_python_loss(obj):
    """A function, or a keras.losses.Loss subclass whose call() is written in Python."""
    return is_function(obj) or getattr(obj, "_native", False) is None and hasattr(obj, "call")


def loss(obj, y_pred_shape):
    """The engine's loss for a Python loss function or Loss subclass (its call() and reduction)."""
    if is_function(obj):
        fn, config = obj, {"name": _name(obj)}
    else:
        fn = obj.call
        config = {"name": obj.name, "reduction": getattr(obj, "reduction", "sum_over_batch_size")}
    model = _trace(fn, y_pred_shape, "loss")
    return _kerascpp.loss_from_function(model._m, json.dumps(config), json.dumps(_serialized(obj)),
                                        lambda y_true_shape: _trace(fn, y_pred_shape, "loss", y_true_shape)._m)


def metric(fn, y_pred_shape):
    """The engine's metric for a Python metric function: the mean of its values, traced as a loss is."""
    model = _trace(fn, y_pred_shape, "metric")
    return _kerascpp.metric_from_function(model._m, _name(fn), json.dumps(_serialized(fn)),
                                          lambda y_true_shape: _trace(fn, y_pred_shape, "metric", y_true_shape)._m)
