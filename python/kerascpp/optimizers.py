"""keras.optimizers over kerascpp's optimizers (Keras 3's update formulas and variables).

    opt = keras.optimizers.Adam(learning_rate=1e-3)
    model.compile(optimizer=opt, loss="mse")
    K.set_value(model.optimizer.learning_rate, 1e-4)
"""
import json
import sys

import numpy as np

from . import _json, _kerascpp, _schedules

schedules = _schedules
sys.modules[__name__ + ".schedules"] = _schedules  # from keras.optimizers.schedules import ...


class Optimizer:
    """A kerascpp optimizer. The subclasses take Keras's arguments (learning_rate first); every
    argument is checked by the engine, and unknown ones are a ValueError naming them."""

    _args = ("learning_rate",)

    def __init__(self, *args, **kwargs):
        if type(self) is Optimizer:
            raise NotImplementedError("Optimizer is a base class: use keras.optimizers.SGD, Adam, ... or "
                                      "keras.optimizers.get(identifier)")
        config = _json.kwargs_of(self._args, args, kwargs, type(self).__name__)
        schedule = config.get("learning_rate")
        in_python = isinstance(schedule, _schedules.LearningRateSchedule) and schedule._runs_in_python()
        if in_python:  # the engine calls it each step; the number only stands in until then
            config["learning_rate"] = 0.001
        self._native = _kerascpp.optimizer_get(_json.dumps({"class_name": type(self).__name__, "config": config}))
        if in_python:
            self._native.set_python_schedule(schedule)

    @classmethod
    def _wrap(cls, native):
        """The Python optimizer over an engine optimizer (compiled from a name or a file)."""
        opt = object.__new__(_CLASSES.get(native.class_name, Optimizer))
        opt._native = native
        return opt

    @property
    def name(self):
        return self._native.name

    @property
    def learning_rate(self):
        """The learning-rate variable (K.get_value / K.set_value work on it); with a schedule, the
        schedule's value at the current step."""
        if self._native.has_schedule:
            return self._native.learning_rate
        return self._native.variables()[1]

    @learning_rate.setter
    def learning_rate(self, value):
        if isinstance(value, _schedules.LearningRateSchedule):
            raise TypeError("kerascpp cannot replace the learning rate of a built optimizer by a schedule: "
                            "pass learning_rate=schedule when making the optimizer")
        self._native.learning_rate = float(value)

    lr = learning_rate  # Keras 2 name

    @property
    def iterations(self):
        # The "iteration" variable, or with gradient_accumulation_steps the steps taken (its value
        # floor-divided by them), as Keras's property.
        if self.get_config().get("gradient_accumulation_steps"):
            return np.int64(self._native.iterations)
        return self._native.variables()[0]

    @property
    def variables(self):
        return self._native.variables()

    @property
    def built(self):
        return self._native.built

    def build(self, var_list):
        self._native.build(list(var_list))

    def apply_gradients(self, grads_and_vars):
        pairs = list(grads_and_vars)
        self._native.apply_gradients([g for g, _ in pairs], [v for _, v in pairs])
        return self.iterations

    def apply(self, grads, trainable_variables=None):
        self._native.apply_gradients(list(grads), list(trainable_variables))

    def get_config(self):
        return json.loads(self._native.get_config_json())

    @classmethod
    def from_config(cls, config, custom_objects=None):
        name = cls.__name__ if cls is not Optimizer else config.get("name")
        return cls._wrap(_kerascpp.optimizer_get(_json.dumps({"class_name": name, "config": config})))

    def _serialize(self):
        return {"module": "keras.optimizers", "class_name": self._native.class_name,
                "config": self.get_config(), "registered_name": None}

    def __repr__(self):
        return f"<kerascpp.optimizers.{self._native.class_name} name={self.name}>"


# One class per entry of the engine's list (src/training/optimizers/optimizer_list.inc).
_CLASSES = _json.classes_of(Optimizer, _kerascpp.optimizer_classes(), __name__)
globals().update(_CLASSES)


def get(identifier):
    """An optimizer from a name ("adam"), a config dict ({"class_name", "config"}) or an optimizer."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, (str, dict)):
        return Optimizer._wrap(_kerascpp.optimizer_get(_json.dumps(identifier)))
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")


def serialize(optimizer):
    return optimizer._serialize()


def deserialize(config, custom_objects=None):
    return get(config)
