"""Real Keras loads the model examples/build_and_train saved and predicts what the program wrote:
    keras_predicts_same.py MODEL.keras PREDICTIONS.txt"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import keras  # noqa: E402

model = keras.models.load_model(sys.argv[1])
x = (np.arange(16 * 8) % 7).astype("float32").reshape(16, 8) * 0.25 - 0.5  # the program's pattern()
want = np.loadtxt(sys.argv[2], dtype="float32").reshape(16, 1)
got = model.predict(x, verbose=0)
# float32 round-off of two engines summing in different orders, scaled to the outputs.
bound = 1e-5 * max(1.0, float(np.abs(want).max()))
diff = float(np.abs(got - want).max())
assert diff <= bound, f"Keras predicts {diff} away from kerascpp (bound {bound})"
print(f"ok: Keras 3 loads the model built in C++ and predicts the same (max diff {diff:.2e})")
