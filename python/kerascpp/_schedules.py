"""keras.optimizers.schedules: learning rates that follow the optimizer's step. Pass one as
learning_rate=...; the optimizer's config then holds the schedule's config, as in Keras."""
import json

from . import _json, _kerascpp


class LearningRateSchedule:
    _args = ()

    def __init__(self, *args, **kwargs):
        if type(self) is LearningRateSchedule:
            raise NotImplementedError("kerascpp runs its own schedules only: " + ", ".join(_CLASSES))
        config = _json.kwargs_of(self._args, args, kwargs, type(self).__name__)
        self._native = _kerascpp.schedule_from_config(_json.dumps({"class_name": type(self).__name__,
                                                                   "config": config}))

    def __call__(self, step):
        return self._native(int(step))

    def get_config(self):
        return json.loads(self._native.get_config_json())

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def _serialize(self):
        return {"module": "keras.optimizers.schedules", "class_name": type(self).__name__,
                "config": self.get_config(), "registered_name": None}


# One class per entry of the engine's list (src/training/optimizers/schedule_list.inc).
_CLASSES = _json.classes_of(LearningRateSchedule, _kerascpp.schedule_classes(), __name__)
globals().update(_CLASSES)
