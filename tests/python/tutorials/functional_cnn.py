"""A Keras functional-API tutorial model (keras.io "The Functional API": several inputs, a CNN branch
and a dense branch, merged), on synthetic images (no download): fit with validation_data, evaluate,
save as .keras and .h5.

    python functional_cnn.py OUT_DIR    # writes cnn.keras, cnn.h5, cnn_x_*.npy, cnn_y.npy
"""
import os
import sys

import numpy as np

import kerascpp as keras
from kerascpp import layers

out = sys.argv[1]
keras.utils.set_random_seed(2)
rng = np.random.default_rng(0)
images = rng.random((256, 12, 12, 1)).astype("float32")
meta = rng.random((256, 4)).astype("float32")
labels = keras.utils.to_categorical((images.mean(axis=(1, 2, 3)) > 0.5).astype(int) + (meta[:, 0] > 0.5), 3)

image_input = keras.Input(shape=(12, 12, 1), name="image")
meta_input = keras.Input(shape=(4,), name="meta")
x = layers.Conv2D(8, 3, activation="relu")(image_input)
x = layers.BatchNormalization()(x)
x = layers.MaxPooling2D(2)(x)
x = layers.Conv2D(8, 3, padding="same", activation="relu")(x)
x = layers.GlobalAveragePooling2D()(x)
m = layers.Dense(8, activation="relu")(meta_input)
x = layers.concatenate([x, m]) if hasattr(layers, "concatenate") else layers.Concatenate()([x, m])
outputs = layers.Dense(3, activation="softmax", name="class")(x)
model = keras.Model(inputs=[image_input, meta_input], outputs=outputs, name="two_inputs")
model.summary()
model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2), loss="categorical_crossentropy",
              metrics=["accuracy"])
history = model.fit([images[:200], meta[:200]], labels[:200], batch_size=32, epochs=4, verbose=0,
                    validation_data=([images[200:], meta[200:]], labels[200:]))
assert "val_loss" in history.history and len(history.history["loss"]) == 4
print("evaluate:", model.evaluate([images, meta], labels, verbose=0))
model.save(os.path.join(out, "cnn.keras"))
model.save(os.path.join(out, "cnn.h5"))
np.save(os.path.join(out, "cnn_x_image.npy"), images[:16])
np.save(os.path.join(out, "cnn_x_meta.npy"), meta[:16])
np.save(os.path.join(out, "cnn_y.npy"), model.predict([images[:16], meta[:16]], verbose=0))
