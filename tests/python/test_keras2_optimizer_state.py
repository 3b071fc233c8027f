"""Keras 2 era optimizer state that does not fit is skipped whole, with a warning naming why.

The fixtures (tests/fixtures/keras2_optimizers, scripts/fixtures/keras2_optimizer_state.py) resume as
Keras does: tests/cpp/training/keras2_optimizer_state_test.cpp. Here h5py breaks copies of them the
ways a damaged or foreign file can, and the load must go on with the file's weights and a fresh
optimizer (iterations 0), as Keras warns and goes on.
"""
import os
import shutil

import h5py
import numpy as np
import pytest

import kerascpp as keras

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "keras2_optimizers")


def edited(tmp_path, name, edit):
    """A copy of fixture `name` whose optimizer_weights (names, values) `edit` changes in place."""
    path = str(tmp_path / name)
    shutil.copyfile(os.path.join(FIXTURES, name), path)
    with h5py.File(path, "r+") as f:
        g = f["optimizer_weights"]
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in g.attrs["weight_names"]]
        values = [g[n][()] for n in names]
        edit(names, values)
        del f["optimizer_weights"]
        g = f.create_group("optimizer_weights")
        for n, v in zip(names, values):
            g.create_dataset(n, data=v)
        g.attrs["weight_names"] = [n.encode() for n in names]
    return path


def drop(i):
    def edit(names, values):
        del names[i], values[i]
    return edit


def swap_names(i, j):
    def edit(names, values):
        names[i], names[j] = names[j], names[i]
    return edit


def rename_slot(first, last, slot):
    def edit(names, values):
        for i in range(first, last):
            names[i] = names[i].rsplit("/", 1)[0] + f"/{slot}:0"
    return edit


def reshape(i, shape):
    def edit(names, values):
        values[i] = np.zeros(shape, np.float32)
    return edit


@pytest.mark.parametrize("name,edit,says", [
    ("adam.h5", drop(4), "has 3 'm' weights for 4 trainable weights"),
    ("adam.h5", swap_names(1, 3), "belongs to dense_1/kernel, but trainable weight 0 is"),
    ("adam.h5", rename_slot(5, 9, "w"), "Adam/dense/kernel/w:0 is a slot Adam does not keep"),
    ("adam_amsgrad.h5", lambda n, v: (n.__delitem__(slice(9, 13)), v.__delitem__(slice(9, 13))),
     "restores 8 of the optimizer's 12 slot variables"),
    ("adam_keras23.h5", drop(-1), "do not make whole blocks"),
    ("sgd_nesterov_keras23.h5", reshape(1, (2, 2)), "has shape (2, 2), the momentum of"),
])
def test_state_that_does_not_fit_is_skipped_by_name(tmp_path, name, edit, says):
    path = edited(tmp_path, name, edit)
    with pytest.warns(UserWarning, match="Skipping loading optimizer state") as record:
        model = keras.models.load_model(path)
    messages = [str(w.message) for w in record if "optimizer state" in str(w.message)]
    assert len(messages) == 1 and says in messages[0], messages
    assert model.compiled and int(np.asarray(model.optimizer.iterations)) == 0
    original = keras.models.load_model(os.path.join(FIXTURES, name), compile=False)
    for a, b in zip(model.get_weights(), original.get_weights()):
        np.testing.assert_array_equal(a, b)

