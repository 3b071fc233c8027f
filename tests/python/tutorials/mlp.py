"""A Keras tutorial MLP (keras.io "The Sequential model" / MNIST MLP), on synthetic digits (no
download): Sequential, Dropout, fit with validation_split and EarlyStopping, evaluate, save.

    python mlp.py OUT_DIR    # writes OUT_DIR/mlp.keras, mlp_x.npy, mlp_y.npy (the model's predictions)
"""
import os
import sys

import numpy as np

import kerascpp as keras

out = sys.argv[1]
keras.utils.set_random_seed(1)
rng = np.random.default_rng(0)
num_classes = 4
x_train = rng.random((512, 20)).astype("float32")
labels = (x_train[:, :4].argmax(axis=1)).astype("int64")
y_train = keras.utils.to_categorical(labels, num_classes)
x_test = x_train[:32]

model = keras.Sequential(
    [
        keras.Input(shape=(20,)),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dropout(0.2),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(num_classes, activation="softmax"),
    ]
)
model.summary()
model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
history = model.fit(x_train, y_train, batch_size=32, epochs=8, validation_split=0.1, verbose=0,
                    callbacks=[keras.callbacks.EarlyStopping(monitor="val_loss", patience=3)])
score = model.evaluate(x_train, y_train, verbose=0)
print("loss, accuracy:", score)
assert history.history["loss"][-1] < history.history["loss"][0], history.history
model.save(os.path.join(out, "mlp.keras"))
np.save(os.path.join(out, "mlp_x.npy"), x_test)
np.save(os.path.join(out, "mlp_y.npy"), model.predict(x_test, verbose=0))
