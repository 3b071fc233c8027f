"""A Keras text-classification tutorial model (keras.io "Working with RNNs"): padded token sequences,
Embedding(mask_zero=True), a Bidirectional LSTM, an RNN over a GRU cell, fit and save, on synthetic
sequences (no download).

    python text_classifier.py OUT_DIR    # writes text.keras, text_x.npy, text_y.npy
"""
import os
import sys

import numpy as np

import kerascpp as keras
from kerascpp import layers

out = sys.argv[1]
keras.utils.set_random_seed(4)
rng = np.random.default_rng(0)
sequences = [list(rng.integers(1, 50, size=rng.integers(3, 12))) for _ in range(160)]
labels = np.array([float(np.mean(s) > 25) for s in sequences], dtype="float32")
x = keras.utils.pad_sequences(sequences, maxlen=10, padding="post")

inputs = keras.Input(shape=(None,), dtype="int32")
h = layers.Embedding(input_dim=50, output_dim=8, mask_zero=True)(inputs)
h = layers.Bidirectional(layers.LSTM(8, return_sequences=True))(h)
h = layers.RNN(layers.GRUCell(6))(h)
outputs = layers.Dense(1, activation="sigmoid")(h)
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
model.fit(x, labels, batch_size=16, epochs=2, validation_split=0.25, verbose=0)
model.save(os.path.join(out, "text.keras"))
np.save(os.path.join(out, "text_x.npy"), x[:16].astype("float32"))
np.save(os.path.join(out, "text_y.npy"), model.predict(x[:16], verbose=0))
