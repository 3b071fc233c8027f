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


def _make_classes():
    """ExponentialDecay, ...: one class per entry of the engine's list
    (src/training/optimizers/schedule_list.inc), each taking Keras's arguments in Keras's order."""
    return {name: type(name, (LearningRateSchedule,), {"_args": tuple(args), "__module__": __name__})
            for name, args, _ in _kerascpp.schedule_classes()}


_CLASSES = _make_classes()
globals().update(_CLASSES)
