"""keras.losses over kerascpp's losses: the classes (MeanSquaredError(), CategoricalCrossentropy(
from_logits=True)...) and the functions (mean_squared_error, mse...), for model.compile(loss=...) and
to call directly: loss(y_true, y_pred, sample_weight=None) -> a numpy float32."""
import json

import numpy as np

from . import _json, _kerascpp


class Loss:
    """A Keras loss. Built-in classes run in the engine (and so can train); a Python subclass that
    defines call(y_true, y_pred) can be called here, but kerascpp cannot train with it."""

    _args = ("reduction", "name", "dtype")

    def __init__(self, *args, **kwargs):
        config = _json.kwargs_of(self._args, args, kwargs, type(self).__name__)
        if type(self).__name__ in _CLASS_NAMES and type(self).call is Loss.call:
            self._native = _kerascpp.loss_get(_json.dumps({"class_name": type(self).__name__, "config": config}))
        else:  # a user's loss written in Python
            self._native = None
            self.name = config.get("name") or type(self).__name__
            self.reduction = config.get("reduction", "sum_over_batch_size")

    @classmethod
    def _wrap(cls, native):
        loss = object.__new__(_CLASSES.get(native.class_name, Loss))
        loss._native = native
        return loss

    def __getattr__(self, key):  # name and reduction of a built-in loss
        native = self.__dict__.get("_native")
        if native is not None and key == "name":
            return native.name
        if native is not None and key == "reduction":
            return self.get_config()["reduction"]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{key}'")

    def call(self, y_true, y_pred):
        """The per-sample losses (the last axis reduced where Keras reduces it)."""
        if self._native is None:
            raise NotImplementedError(f"{type(self).__name__} must implement call(y_true, y_pred)")
        return self._native.call(y_true, y_pred)

    def __call__(self, y_true, y_pred, sample_weight=None):
        if self._native is not None:
            return self._native(y_true, y_pred, sample_weight)
        values = np.asarray(self.call(y_true, y_pred), dtype="float32")  # Keras's Loss.__call__
        if sample_weight is not None:
            values = values * np.asarray(sample_weight, dtype="float32").reshape(
                values.shape[:np.ndim(sample_weight)] + (1,) * (values.ndim - np.ndim(sample_weight)))
        if self.reduction in (None, "none"):
            return values
        total = np.float32(values.sum())
        return total if self.reduction == "sum" else np.float32(total / max(values.size, 1))

    def get_config(self):
        if self._native is None:
            return {"name": self.name, "reduction": self.reduction}
        return json.loads(self._native.get_config_json())

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def _serialize(self):
        return {"module": "keras.losses", "class_name": type(self).__name__, "config": self.get_config(),
                "registered_name": None}


def _function(name, class_name):
    """keras.losses.<name>(y_true, y_pred, **options): the per-sample losses, unreduced."""
    default = []

    def fn(y_true, y_pred, **options):
        if options:
            loss = _kerascpp.loss_get(_json.dumps({"class_name": class_name, "config": options}))
        else:
            if not default:
                default.append(_kerascpp.loss_get(_json.dumps(name)))
            loss = default[0]
        return loss.call(y_true, y_pred)

    fn.__name__ = fn.__qualname__ = name
    fn._kerascpp_identifier = name  # model.compile(loss=keras.losses.mse) sends the name
    return fn


# One class per entry of the engine's list (src/training/losses/loss_list.inc), and its functions.
_CLASSES = _json.classes_of(Loss, _kerascpp.loss_classes(), __name__)
_FUNCTIONS = {f: _function(f, name) for name, _, names in _kerascpp.loss_classes() for f in names}
_CLASS_NAMES = frozenset(_CLASSES)
globals().update(_CLASSES)
globals().update(_FUNCTIONS)


def get(identifier):
    """A loss from a name ("mse"), a config dict, a Loss or a function; None stays None."""
    if identifier is None or isinstance(identifier, Loss) or callable(identifier):
        return identifier
    if isinstance(identifier, (str, dict)):
        return Loss._wrap(_kerascpp.loss_get(_json.dumps(identifier)))
    raise ValueError(f"Could not interpret loss identifier: {identifier!r}")


def serialize(loss):
    if hasattr(loss, "_kerascpp_identifier"):
        return loss._kerascpp_identifier
    return loss._serialize()


def deserialize(config, custom_objects=None):
    return get(config)


def _compile_form(loss):
    """What model.compile sends for one loss: ("id", json identifier) or ("obj", native loss)."""
    if isinstance(loss, str) or isinstance(loss, dict) and "class_name" in loss:
        return "id", loss
    if isinstance(loss, Loss) and loss._native is not None:
        return "obj", loss._native
    if isinstance(loss, _kerascpp.Loss):  # a traced Python loss (kerascpp._functions)
        return "obj", loss
    if hasattr(loss, "_kerascpp_identifier"):
        return "id", loss._kerascpp_identifier
    if callable(loss):
        raise NotImplementedError(
            f"kerascpp cannot train with the Python loss {getattr(loss, '__name__', type(loss).__name__)}: its "
            "gradient is not recorded. Use a built-in loss (a name such as 'mse', or a keras.losses class).")
    raise ValueError(f"Could not interpret loss identifier: {loss!r}")
