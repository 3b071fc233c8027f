"""keras.optimizers.schedules: learning rates that follow the optimizer's step. Pass one as
learning_rate=...; the optimizer's config then holds the schedule's config, as in Keras."""
import json

from . import _json, _kerascpp


class LearningRateSchedule:
    """The base of keras.optimizers.schedules. Keras's schedules run in the engine; a subclass of your
    own defines __call__(step) (and get_config() to be saved), as in Keras: the optimizer calls it once
    per step, taking the GIL (the transformer warm-up schedule of the Keras guides runs unchanged)."""
    _args = ()

    def __init__(self, *args, **kwargs):
        native = next((c for c in type(self).__mro__ if c in _NATIVE), None)
        if native is None:  # a user's schedule: its own __init__ keeps its arguments
            self._native = None
            return
        config = _json.kwargs_of(native._args, args, kwargs, type(self).__name__)
        self._native = _kerascpp.schedule_from_config(_json.dumps({"class_name": native.__name__, "config": config}))

    def __call__(self, step):
        if getattr(self, "_native", None) is None:
            raise NotImplementedError(f"Learning rate schedule '{type(self).__name__}' must override "
                                      "`__call__(self, step)`.")
        return self._native(int(step))

    def get_config(self):
        if getattr(self, "_native", None) is None:
            raise NotImplementedError(f"Learning rate schedule '{type(self).__name__}' must override "
                                      "`get_config()` in order to be serializable.")
        return json.loads(self._native.get_config_json())

    def _runs_in_python(self):
        """A user's schedule, or a subclass of Keras's that computes the rate itself."""
        return getattr(self, "_native", None) is None or type(self).__call__ is not LearningRateSchedule.__call__

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def _serialize(self):
        return {"module": "keras.optimizers.schedules", "class_name": type(self).__name__,
                "config": self.get_config(), "registered_name": None}


# One class per entry of the engine's list (src/training/optimizers/schedule_list.inc).
_CLASSES = _json.classes_of(LearningRateSchedule, _kerascpp.schedule_classes(), __name__)
_NATIVE = set(_CLASSES.values())
globals().update(_CLASSES)
