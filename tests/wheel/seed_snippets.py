"""The seed snippets (README's Python quick start), run with the kerascpp that pip installed from the
wheel into a fresh virtual environment (no Keras, no source tree on the path): the wheel must run on
its own. Compared with Keras's outputs written beside the seed model.

    python seed_snippets.py tests/fixtures/seed_mlp_2x10
"""
import os
import sys
import tempfile

import numpy as np

import kerascpp as keras
from kerascpp import backend as K

seed = sys.argv[1]
assert "site-packages" in keras.__file__, f"not the installed package: {keras.__file__}"

x = np.load(os.path.join(seed, "keras3", "input_0.npy"))
want = np.load(os.path.join(seed, "keras3", "output_0.npy"))
# 1e-5 of the output's scale, the bound of every fixture check (tests/python/fixture_tolerance.py;
# the outputs were computed by TensorFlow on another machine).
tol = 1e-5 * float(np.max(np.abs(want)))

models = []
for form in ("keras3/model.h5", "keras3/model.keras", "tf_keras/model.h5"):
    m = keras.models.load_model(os.path.join(seed, form), compile=False)
    got = m.predict(x, verbose=0)
    assert np.max(np.abs(got - want)) <= tol, (form, np.max(np.abs(got - want)))
    models.append(m)

w = models[0].weights[0]
first = K.get_value(w)
for _ in range(1000):
    v = K.get_value(w)
assert np.array_equal(v, first) and v.shape == (8, 10)

K.clear_session()  # breaks no model already loaded
assert np.array_equal(models[1].predict(x, verbose=0), models[1].predict(x, verbose=0))

with open(os.path.join(seed, "keras3", "config.json")) as f:
    m2 = keras.models.model_from_json(f.read())
m2.load_weights(os.path.join(seed, "keras3", "config.weights.h5"))
assert np.max(np.abs(m2.predict(x, verbose=0) - want)) <= tol

model = models[1]
model.compile(optimizer="adam", loss="mse")
history = model.fit(x, want * 2, epochs=3, batch_size=2, verbose=0)
assert len(history.history["loss"]) == 3
with tempfile.TemporaryDirectory() as d:
    model.save(os.path.join(d, "trained.keras"))
    again = keras.models.load_model(os.path.join(d, "trained.keras"))
    assert np.array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))

print(f"ok: the wheel's kerascpp ({os.path.dirname(keras.__file__)}) ran the seed snippets")
