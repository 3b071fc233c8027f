"""keras.utils: the data helpers of Keras tutorials (get_file is left out: kerascpp never downloads)."""
import numpy as np

from ._builder import set_random_seed as _set_builder_seed
from ._data import PyDataset, Sequence  # noqa: F401 (keras.utils.PyDataset / Sequence)


def set_random_seed(seed):
    """Seeds Python's, numpy's and kerascpp's generators: the weights of layers built after it (their
    initializers) are the same from run to run. Training takes its seed from fit()."""
    import random
    random.seed(seed)
    np.random.seed(seed)
    _set_builder_seed(seed)


def to_categorical(x, num_classes=None):
    """keras.utils.to_categorical: class vectors to one-hot rows (a trailing axis of 1 is dropped)."""
    x = np.array(x, dtype="int64")
    shape = x.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    x = x.reshape(-1)
    if num_classes is None:
        num_classes = int(np.max(x)) + 1
    out = np.zeros((x.shape[0], num_classes), dtype="float32")
    out[np.arange(x.shape[0]), x] = 1
    return out.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """keras.utils.normalize: x divided by its `order`-norm along `axis` (zero norms left as 0)."""
    x = np.asarray(x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """keras.utils.pad_sequences: a list of sequences as one array of maxlen steps."""
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    lengths, sample_shape = [], ()
    for s in sequences:
        try:
            lengths.append(len(s))
        except TypeError as e:
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: {s}") from e
        if len(s) and not sample_shape:
            sample_shape = np.asarray(s).shape[1:]
    if maxlen is None:
        maxlen = max(lengths) if lengths else 0
    is_str = np.issubdtype(np.dtype(dtype), np.str_) or np.issubdtype(np.dtype(dtype), np.object_)
    if isinstance(value, str) and dtype is not object and not is_str:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: {type(value)}")
    x = np.full((len(sequences), maxlen) + sample_shape, value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s):
            continue
        if truncating == "pre":
            trunc = s[-maxlen:]
        elif truncating == "post":
            trunc = s[:maxlen]
        else:
            raise ValueError(f'Truncating type "{truncating}" not understood')
        trunc = np.asarray(trunc, dtype=dtype)
        if trunc.shape[1:] != sample_shape:
            raise ValueError(f"Shape of sample {trunc.shape[1:]} of sequence at position {i} is different from "
                             f"expected shape {sample_shape}")
        if padding == "post":
            x[i, :len(trunc)] = trunc
        elif padding == "pre":
            x[i, -len(trunc):] = trunc
        else:
            raise ValueError(f'Padding type "{padding}" not understood')
    return x
