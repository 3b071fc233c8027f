"""A Keras transfer-learning tutorial (keras.io "Transfer learning & fine-tuning"): a base model
trained and saved, loaded back, its feature layers taken as a frozen model, a new head trained on
them, then the whole saved.

    python transfer.py OUT_DIR    # writes base.keras, transfer.keras, transfer_x.npy, transfer_y.npy
"""
import os
import sys

import numpy as np

import kerascpp as keras

out = sys.argv[1]
keras.utils.set_random_seed(3)
rng = np.random.default_rng(0)
x = rng.random((128, 10, 10, 3)).astype("float32")
y_old = (x[..., 0].mean(axis=(1, 2)) > 0.5).astype("float32")
y_new = (x[..., 1].mean(axis=(1, 2)) > 0.5).astype("float32")

inputs = keras.Input(shape=(10, 10, 3))
h = keras.layers.Conv2D(6, 3, activation="relu", name="conv")(inputs)
h = keras.layers.BatchNormalization(name="bn")(h)
h = keras.layers.GlobalMaxPooling2D(name="features")(h)
base = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(h), name="base")
base.compile(optimizer="adam", loss="binary_crossentropy")
base.fit(x, y_old, epochs=2, verbose=0)
base.save(os.path.join(out, "base.keras"))

base = keras.models.load_model(os.path.join(out, "base.keras"))
extractor = keras.Model(base.input, base.get_layer("features").output, name="extractor")
extractor.trainable = False
frozen = [w.copy() for w in extractor.get_weights()]

inputs = keras.Input(shape=(10, 10, 3))
features = extractor(inputs, training=False)
outputs = keras.layers.Dense(1, activation="sigmoid", name="new_head")(features)
model = keras.Model(inputs, outputs, name="transfer")
assert len(model.trainable_weights) == 2, model.trainable_weights
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy", metrics=["accuracy"])
model.fit(x, y_new, epochs=3, verbose=0, validation_split=0.2)
for before, after in zip(frozen, extractor.get_weights()):
    np.testing.assert_array_equal(before, after)  # frozen: BatchNormalization's statistics too
model.save(os.path.join(out, "transfer.keras"))
np.save(os.path.join(out, "transfer_x.npy"), x[:16])
np.save(os.path.join(out, "transfer_y.npy"), model.predict(x[:16], verbose=0))
