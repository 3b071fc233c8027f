"""Runs a script in real Keras (or tf_keras) in its own process and returns what it printed after
"RESULT" as JSON: the reference a parity test compares kerascpp with. Keras and TensorFlow are pinned
test dependencies, so a run that prints no result fails the test with Keras's error."""
import json
import os
import subprocess
import sys

import pytest


def run(script, *args):
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True, env=env)
    line = [l for l in r.stdout.splitlines() if l.startswith("RESULT")]
    if not line:
        pytest.fail("real Keras did not run: " + r.stderr[-800:])
    return json.loads(line[-1][len("RESULT"):])
