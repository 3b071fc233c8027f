"""The engine's lists of optimizers, schedules, losses and metrics (src/training/**/*_list.inc) against
real Keras 3: each class exists in Keras, takes its arguments in the order the list gives (so positional
calls mean the same), and the Python package offers exactly the classes of the list."""
import json
import subprocess
import sys

import pytest

import kerascpp as keras
from kerascpp import _kerascpp

# Run in a child: real Keras and kerascpp both answer to `keras` in a script.
KERAS_SIGNATURES = r"""
import inspect, json, sys
import keras
families = json.loads(sys.argv[1])
out = {}
for family, names in families.items():
    module = {"optimizers": keras.optimizers, "schedules": keras.optimizers.schedules,
              "losses": keras.losses, "metrics": keras.metrics}[family]
    out[family] = {}
    for name in names:
        cls = getattr(module, name, None)
        out[family][name] = None if cls is None else [
            p.name for p in inspect.signature(cls.__init__).parameters.values()
            if p.name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
print(json.dumps(out))
"""

LISTS = {"optimizers": _kerascpp.optimizer_classes(), "schedules": _kerascpp.schedule_classes(),
         "losses": _kerascpp.loss_classes(), "metrics": _kerascpp.metric_classes()}


@pytest.fixture(scope="module")
def keras_signatures():
    names = {family: [name for name, _, _ in classes] for family, classes in LISTS.items()}
    r = subprocess.run([sys.executable, "-c", KERAS_SIGNATURES, json.dumps(names)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("family", sorted(LISTS))
def test_every_listed_class_takes_keras_arguments_in_keras_order(family, keras_signatures):
    assert LISTS[family], family
    for name, args, _ in LISTS[family]:
        keras_args = keras_signatures[family][name]
        assert keras_args is not None, f"keras.{family} has no class {name}"
        assert args, name
        # The list's arguments are the leading ones of Keras's signature, in its order.
        assert keras_args[:len(args)] == list(args), (family, name, args, keras_args)


def test_python_classes_are_the_lists():
    modules = {"optimizers": keras.optimizers, "schedules": keras.optimizers.schedules,
               "losses": keras.losses, "metrics": keras.metrics}
    for family, classes in LISTS.items():
        for name, args, identifiers in classes:
            cls = getattr(modules[family], name)
            assert cls._args == tuple(args), (family, name)
            if family == "losses":  # each function of the list is a keras.losses function
                for f in identifiers:
                    assert getattr(keras.losses, f).__name__ == f
    # Positional arguments follow the list: SGD(0.1, 0.9) is learning_rate=0.1, momentum=0.9.
    sgd = keras.optimizers.SGD(0.1, 0.9).get_config()
    assert sgd["learning_rate"] == pytest.approx(0.1) and sgd["momentum"] == pytest.approx(0.9)
    assert keras.metrics.BinaryAccuracy("acc", None, 0.7).get_config()["threshold"] == pytest.approx(0.7)
    assert keras.losses.Huber(2.0).get_config()["delta"] == pytest.approx(2.0)
    assert keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5).get_config()["decay_rate"] == 0.5
