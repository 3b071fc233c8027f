"""A few keras.ops, on numpy arrays, for the call() of custom layers and Lambda functions."""
import numpy as np

matmul = np.matmul
add = np.add
subtract = np.subtract
multiply = np.multiply
divide = np.divide
maximum = np.maximum
minimum = np.minimum
exp = np.exp
log = np.log
sqrt = np.sqrt
square = np.square
abs = np.abs
tanh = np.tanh
sum = np.sum
mean = np.mean
max = np.max
min = np.min
concatenate = np.concatenate
reshape = np.reshape
transpose = np.transpose
expand_dims = np.expand_dims
squeeze = np.squeeze
where = np.where
clip = np.clip
stack = np.stack


def dot(a, b):
    return np.dot(np.asarray(a), np.asarray(b))


def convert_to_tensor(x, dtype=None):
    return np.asarray(x, dtype=dtype or "float32")


def cast(x, dtype):
    return np.asarray(x).astype(dtype)


def relu(x):
    return np.maximum(np.asarray(x), 0)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x)))


def softmax(x, axis=-1):
    x = np.asarray(x)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def shape(x):
    return tuple(np.shape(x))
