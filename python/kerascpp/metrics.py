"""keras.metrics over kerascpp's metrics: update_state / result / reset_state, and for
model.compile(metrics=[...]) as objects or by name ("accuracy", "mae", "AUC"...)."""
import json

import numpy as np

from . import _json, _kerascpp


class Metric:
    """A Keras metric run by the engine. Python subclasses with their own update_state are not
    supported by compile()."""

    _args = ("name", "dtype")

    def __init__(self, *args, **kwargs):
        config = _json.kwargs_of(self._args, args, kwargs, type(self).__name__)
        if type(self).__name__ not in _CLASS_NAMES:
            raise NotImplementedError(f"kerascpp runs its own metrics only ({', '.join(sorted(_CLASS_NAMES))}). "
                                      f"Received: {type(self).__name__}")
        self._native = _kerascpp.metric_get(_json.dumps({"class_name": type(self).__name__, "config": config}))

    @classmethod
    def _wrap(cls, native):
        m = object.__new__(_CLASSES.get(native.class_name, Metric))
        m._native = native
        return m

    @property
    def name(self):
        return self._native.name

    def update_state(self, y_true, y_pred, sample_weight=None):
        self._native.update_state(y_true, y_pred, sample_weight)

    def result(self):
        return np.float32(self._native.result())

    def reset_state(self):
        self._native.reset_state()

    reset_states = reset_state  # Keras 2 name

    def __call__(self, y_true, y_pred, sample_weight=None):
        self.update_state(y_true, y_pred, sample_weight)
        return self.result()

    def get_config(self):
        return json.loads(self._native.get_config_json())

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def _serialize(self):
        return {"module": "keras.metrics", "class_name": type(self).__name__, "config": self.get_config(),
                "registered_name": None}

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


# One class per entry of the engine's list (src/training/metrics/metric_list.inc).
_CLASSES = _json.classes_of(Metric, _kerascpp.metric_classes(), __name__)
globals().update(_CLASSES)
_CLASS_NAMES = frozenset(_CLASSES)


def _values_update_state(self, values, sample_weight=None):
    """Mean and Sum take the values themselves, as Keras's reduction metrics."""
    self._native.update_state(values, None, sample_weight)


Mean.update_state = _values_update_state  # noqa: F821 (made above)
Sum.update_state = _values_update_state  # noqa: F821


def _wrapper_init(self, fn, name=None, dtype=None, **kwargs):
    """keras.metrics.MeanMetricWrapper(fn, name, dtype, **kwargs): fn is one of Keras's functions
    (keras.losses.mean_squared_error, or its name); kwargs are its options."""
    ident = fn if isinstance(fn, (str, dict)) else getattr(fn, "_kerascpp_identifier", None)
    if ident is None:
        raise NotImplementedError(f"kerascpp cannot average the Python function "
                                  f"{getattr(fn, '__name__', type(fn).__name__)} yet: MeanMetricWrapper takes one "
                                  "of Keras's loss or metric functions (or its name)")
    config = {"fn": ident, **kwargs}
    if name is not None:
        config["name"] = name
    if dtype is not None:
        config["dtype"] = dtype
    self._native = _kerascpp.metric_get(_json.dumps({"class_name": "MeanMetricWrapper", "config": config}))


MeanMetricWrapper.__init__ = _wrapper_init  # noqa: F821


def get(identifier):
    """A metric from a name ("mae"; "accuracy" needs the model, so compile resolves it), a config
    dict or a Metric."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, (str, dict)):
        return Metric._wrap(_kerascpp.metric_get(_json.dumps(identifier)))
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")


def serialize(metric):
    return metric._serialize()


def deserialize(config, custom_objects=None):
    return get(config)


def _compile_form(metric):
    """What model.compile sends for one metric: ("id", json identifier) or ("obj", native metric)."""
    if isinstance(metric, str) or isinstance(metric, dict) and "class_name" in metric:
        return "id", metric
    if isinstance(metric, Metric):
        return "obj", metric._native
    if isinstance(metric, _kerascpp.Metric):  # a traced Python metric function (kerascpp._functions)
        return "obj", metric
    name = getattr(metric, "_kerascpp_identifier", None)  # keras.losses.mse as a metric
    if name is not None:
        return "id", name
    if callable(metric):
        raise NotImplementedError(f"kerascpp cannot compile the Python metric "
                                  f"{getattr(metric, '__name__', type(metric).__name__)}: use a built-in metric "
                                  f"({', '.join(sorted(_CLASS_NAMES))}) or its name")
    raise ValueError(f"Could not interpret metric identifier: {metric!r}")
