"""Writes tests/fixtures/cudnn_rnn/tf_keras: a tf_keras model of CuDNNLSTM, Bidirectional(CuDNNLSTM)
and CuDNNGRU layers (Keras 2's cuDNN-only layers, which store their weights in cuDNN's layout) saved as
.h5 and as JSON + weights .h5, with random weights.

They run on GPUs only, so the reference outputs come from Keras's own conversion: the same model
built of LSTM / GRU(reset_after=True, sigmoid) loads the CuDNN file (tf_keras converts the weights
while loading, saving/legacy/hdf5_format.py _convert_rnn_weights) and predicts.

Usage: .venv/bin/python scripts/make_cudnn_fixture.py
"""
import json
import os
import shutil

import numpy as np
import tf_keras as K
from tf_keras.src.layers.rnn.cudnn_gru import CuDNNGRU
from tf_keras.src.layers.rnn.cudnn_lstm import CuDNNLSTM

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
OUT = os.path.join(ROOT, "tests", "fixtures", "cudnn_rnn", "tf_keras")


def build(cudnn):
    L = K.layers
    lstm = (lambda u, **kw: CuDNNLSTM(u, **kw)) if cudnn else (lambda u, **kw: L.LSTM(u, **kw))
    gru = (lambda u, **kw: CuDNNGRU(u, **kw)) if cudnn else (
        lambda u, **kw: L.GRU(u, reset_after=True, recurrent_activation="sigmoid", **kw))
    x = K.Input((6, 3), name="frames")
    h = lstm(5, return_sequences=True, name="lstm")(x)
    h = L.Bidirectional(lstm(4, return_sequences=True), name="bilstm")(h)
    y = gru(3, name="gru")(h)
    return K.Model(x, y, name="cudnn_rnn")


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    rng = np.random.default_rng(15)
    model = build(cudnn=True)
    model.set_weights([(rng.standard_normal(w.shape) * 0.5).astype(np.float32) for w in model.get_weights()])
    model.save(os.path.join(OUT, "model.h5"))
    with open(os.path.join(OUT, "config.json"), "w") as f:
        f.write(model.to_json())
    model.save_weights(os.path.join(OUT, "config.h5"))
    twin = build(cudnn=False)
    twin.load_weights(os.path.join(OUT, "model.h5"))  # Keras converts the cuDNN layout here
    x = rng.standard_normal((4, 6, 3)).astype(np.float32)
    y = twin.predict(x, verbose=0)
    np.save(os.path.join(OUT, "input_0.npy"), x)
    np.save(os.path.join(OUT, "output_0.npy"), y)
    meta = {"writer": f"tf_keras {K.__version__}", "case": "cudnn_rnn", "model_class": "Functional",
            "model_name": "cudnn_rnn", "call_structure": "single",
            "inputs": [{"name": "frames", "file": "input_0.npy", "shape": list(x.shape), "dtype": "float32"}],
            "outputs": [{"name": "gru", "file": "output_0.npy", "shape": list(y.shape), "dtype": "float32"}],
            "notes": "CuDNNLSTM / CuDNNGRU weights in cuDNN's layout; outputs of the LSTM / GRU twin that "
                     "loaded them through Keras's conversion (scripts/make_cudnn_fixture.py)"}
    with open(os.path.join(OUT, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
