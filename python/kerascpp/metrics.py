"""keras.metrics over kerascpp's metrics: update_state / result / reset_state, and for
model.compile(metrics=[...]) as objects or by name ("accuracy", "mae", "AUC"...)."""
import json
import operator
import re

import numpy as np

from . import _json, _kerascpp


class Metric:
    """A Keras metric. The built-in classes run in the engine; a subclass written in Python (its own
    update_state and result, with keras.ops and add_variable, as Keras's guides write them) runs in
    Python, called by fit and evaluate once per batch with numpy arrays, as Keras runs it eagerly."""

    _args = ("name", "dtype")

    def __init__(self, *args, **kwargs):
        native = _native_base(type(self))
        if native is None:  # a subclass of Metric itself: Keras's Metric(name=None, dtype=None)
            config = _json.kwargs_of(("name", "dtype"), args, kwargs, type(self).__name__)
            self._native = None
            self._name = config.get("name") or _snake_case(type(self).__name__)
            self._dtype = config.get("dtype") or "float32"
            self._variables = []
            return
        config = _json.kwargs_of(native._args, args, kwargs, type(self).__name__)
        self._native = _kerascpp.metric_get(_json.dumps({"class_name": native.__name__, "config": config}))

    @classmethod
    def _wrap(cls, native):
        m = object.__new__(_CLASSES.get(native.class_name, Metric))
        m._native = native
        return m

    @property
    def name(self):
        return self._name if self._native is None else self._native.name

    @property
    def dtype(self):
        return self._dtype if self._native is None else self.get_config().get("dtype", "float32")

    @property
    def variables(self):
        return list(self._variables) if self._native is None else []

    def add_variable(self, shape=(), initializer="zeros", dtype=None, aggregation="sum", name=None):
        """A state variable of a metric written in Python (assign / assign_add / assign_sub)."""
        if self._native is not None:
            raise ValueError(f"{type(self).__name__} is run by the engine: its state is not Python variables")
        v = _MetricVariable(shape, initializer, dtype or self._dtype, name or f"variable_{len(self._variables)}",
                            type(self).__name__)
        v.aggregation = aggregation
        self._variables.append(v)
        return v

    def _state_for_workers(self):
        """The variables as float64 lists, which data-parallel training sums across workers as Keras sums
        variables of aggregation "sum" (the engine's PyMetric::visit_state)."""
        for v in self._variables:
            if v.aggregation != "sum":
                raise NotImplementedError(f"Metric {type(self).__name__} '{self.name}': variable '{v.name}' has "
                                          f"aggregation={v.aggregation!r}; data-parallel training sums metric "
                                          "variables across workers (aggregation='sum')")
        return [np.asarray(v.value, np.float64).ravel().tolist() for v in self._variables]

    def _set_state_for_workers(self, values):
        for v, x in zip(self._variables, values):
            v.assign(np.asarray(x, np.float64).reshape(v.shape))

    def add_weight(self, name=None, shape=(), aggregation="sum", initializer="zeros", dtype=None):
        """Keras 2's name for add_variable."""
        return self.add_variable(shape, initializer, dtype, aggregation, name)

    def update_state(self, y_true, y_pred, sample_weight=None):
        if self._native is None:
            raise NotImplementedError(f"{type(self).__name__} must implement update_state()")
        self._native.update_state(y_true, y_pred, sample_weight)

    def result(self):
        if self._native is None:
            raise NotImplementedError(f"{type(self).__name__} must implement result()")
        r = self._native.result()
        return r if isinstance(r, np.ndarray) else np.float32(r)  # an array: several thresholds, per class

    def reset_state(self):
        if self._native is None:  # Keras's Metric.reset_state: every variable back to zeros
            for v in self._variables:
                v.assign(np.zeros(v.shape, v.dtype))
            return
        self._native.reset_state()

    reset_states = reset_state  # Keras 2 name

    def __call__(self, y_true, y_pred, sample_weight=None):
        self.update_state(y_true, y_pred, sample_weight)
        return self.result()

    def get_config(self):
        if self._native is None:
            return {"name": self.name, "dtype": self._dtype}
        return json.loads(self._native.get_config_json())

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def _serialize(self):
        if _runs_in_python(self):  # as Keras records a user's class: its module and name
            return {"module": type(self).__module__, "class_name": type(self).__name__, "config": self.get_config(),
                    "registered_name": type(self).__name__}
        return {"module": "keras.metrics", "class_name": type(self).__name__, "config": self.get_config(),
                "registered_name": None}

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


# One class per entry of the engine's list (src/training/metrics/metric_list.inc).
_CLASSES = _json.classes_of(Metric, _kerascpp.metric_classes(), __name__)
globals().update(_CLASSES)
_CLASS_NAMES = frozenset(_CLASSES)
_NATIVE = frozenset(_CLASSES.values())


def _native_base(cls):
    """The engine's class a Metric class is (or derives from); None for a subclass of Metric itself."""
    return next((c for c in cls.__mro__ if c in _NATIVE), None)


def _runs_in_python(metric):
    """A metric whose update_state or result is written in Python (fit calls it per batch)."""
    own = [c for c in type(metric).__mro__ if c is not Metric and c not in _NATIVE and c is not object]
    return any("update_state" in vars(c) or "result" in vars(c) for c in own)


def _snake_case(name):
    """Keras's auto name of a metric class: CategoricalTruePositives -> categorical_true_positives."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class _MetricVariable:
    """A metric's state variable: a numpy array that keras.ops and numpy read, changed by assign,
    assign_add and assign_sub."""

    __array_priority__ = 100

    def __init__(self, shape, initializer, dtype, name, owner):
        shape = tuple(shape) if isinstance(shape, (list, tuple)) else (() if shape is None else (int(shape),))
        if isinstance(initializer, str) and initializer.lower() in ("zeros", "ones"):
            value = (np.zeros if initializer.lower() == "zeros" else np.ones)(shape, dtype)
        elif isinstance(initializer, (int, float)):
            value = np.full(shape, initializer, dtype)
        elif callable(initializer):
            value = np.asarray(initializer(shape, dtype=dtype), dtype)
        else:
            raise ValueError(f"{owner}.add_variable: unknown initializer {initializer!r} for variable '{name}' "
                             "(use 'zeros', 'ones', a number or a callable of (shape, dtype))")
        self.name, self.path = name, f"{owner}/{name}"
        self._value = value

    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype.name)
    value = property(lambda self: self._value)

    def numpy(self):
        return self._value.copy()

    def assign(self, value):
        v = np.asarray(value, self._value.dtype)
        if v.shape != self._value.shape and v.size != 1:
            raise ValueError(f"The shape of the target variable '{self.path}' {self._value.shape} and the shape of "
                             f"the value {v.shape} are not compatible")
        self._value = np.broadcast_to(v, self._value.shape).copy()
        return self

    def assign_add(self, value):
        return self.assign(self._value + np.asarray(value, self._value.dtype))

    def assign_sub(self, value):
        return self.assign(self._value - np.asarray(value, self._value.dtype))

    def __array__(self, dtype=None, copy=None):
        return self._value if dtype is None else self._value.astype(dtype)

    def __float__(self):
        return float(self._value)

    def __repr__(self):
        return f"<Variable path={self.path}, shape={self.shape}, dtype={self.dtype}, value={self._value}>"


for _op in ("add", "sub", "mul", "truediv", "pow", "matmul", "lt", "le", "gt", "ge", "eq", "ne"):
    _f = getattr(operator, _op)
    setattr(_MetricVariable, f"__{_op}__", lambda self, other, _f=_f: _f(self._value, np.asarray(other)))
    if _op not in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(_MetricVariable, f"__r{_op}__", lambda self, other, _f=_f: _f(np.asarray(other), self._value))
for _op in ("mod", "floordiv"):
    _f = getattr(operator, _op)
    setattr(_MetricVariable, f"__{_op}__", lambda self, other, _f=_f: _f(self._value, np.asarray(other)))
    setattr(_MetricVariable, f"__r{_op}__", lambda self, other, _f=_f: _f(np.asarray(other), self._value))
_MetricVariable.__neg__ = lambda self: -self._value
_MetricVariable.__abs__ = lambda self: np.abs(self._value)
_MetricVariable.ndim = property(lambda self: self._value.ndim)
_MetricVariable.__getitem__ = lambda self, key: self._value[key]


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
    if isinstance(metric, Metric) and (metric._native is None or _runs_in_python(metric)):
        return "obj", _kerascpp.metric_from_python(metric, metric.name, _json.dumps(metric._serialize()))
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
