"""model(x, training=True) as in the Keras guides (`data_augmentation(images, training=True)` to look
at augmented images): the layers that act in training only do, with fresh draws per call from
kerascpp's generator (keras.utils.set_random_seed repeats them); model(x) stays the identity there.
Values are checked against Keras in tests/cpp/layers/*augmentation_test.cpp."""
import os

import numpy as np
import pytest

import kerascpp as keras

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_augmentation_block_transforms_with_training_true():
    m = keras.models.load_model(os.path.join(ROOT, "tests", "fixtures", "image_augmentation", "keras3", "model.keras"))
    block = m.get_layer("data_augmentation")
    images = np.random.default_rng(0).uniform(0, 255, size=(4, 12, 16, 3)).astype("float32")
    assert np.array_equal(np.asarray(block(images)), images)  # inference: passed through
    keras.utils.set_random_seed(7)
    a = np.asarray(block(images, training=True))
    b = np.asarray(block(images, training=True))
    keras.utils.set_random_seed(7)
    again = np.asarray(block(images, training=True))
    assert a.shape == images.shape and np.all(np.isfinite(a))
    assert not np.array_equal(a, images) and not np.array_equal(a, b)
    assert np.array_equal(a, again)


def test_dropout_acts_with_training_true():
    inp = keras.Input((1000,))
    m = keras.Model(inp, keras.layers.Dropout(0.5)(inp))
    x = np.ones((2, 1000), dtype="float32")
    y = np.asarray(m(x, training=True))
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert 0.4 < np.mean(y == 0) < 0.6  # 2000 draws of p = 0.5: sd 0.011
    assert np.array_equal(np.asarray(m(x)), x)
    with pytest.raises(NotImplementedError, match="training=True"):
        m(x, training=True, mask=np.ones((2, 1000)))
