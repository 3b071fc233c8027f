"""The data fit / evaluate / predict take besides arrays, as Keras's data adapters read them
(keras/src/trainers/data_adapters): a keras.utils.PyDataset (or Sequence), a Python generator or
iterator, and a tf.data.Dataset (iterated as numpy; TensorFlow is never imported by kerascpp itself).

Each becomes a source the engine reads one batch ahead on its input thread (kerascpp::Dataset): the
source's methods take the GIL, the engine computes without it, so reading overlaps training."""
import concurrent.futures
import itertools
import multiprocessing
import random
import warnings

import numpy as np


class PyDataset:
    """keras.utils.PyDataset: batches by index. Subclasses define __getitem__ and __len__ (or the
    num_batches property; None for an endless dataset). workers > 1 reads that many batches at once on
    threads (on processes with use_multiprocessing=True), up to max_queue_size ahead."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    @property
    def workers(self):
        return getattr(self, "_workers", 1)

    @workers.setter
    def workers(self, value):
        self._workers = value

    @property
    def use_multiprocessing(self):
        return getattr(self, "_use_multiprocessing", False)

    @use_multiprocessing.setter
    def use_multiprocessing(self, value):
        self._use_multiprocessing = value

    @property
    def max_queue_size(self):
        return getattr(self, "_max_queue_size", 10)

    @max_queue_size.setter
    def max_queue_size(self, value):
        self._max_queue_size = value

    def __getitem__(self, index):
        raise NotImplementedError

    @property
    def num_batches(self):
        if hasattr(self, "__len__"):
            return len(self)
        raise NotImplementedError("You need to implement the `num_batches` property:\n\n"
                                  "@property\ndef num_batches(self):\n  return ...")

    def on_epoch_begin(self):
        pass

    def on_epoch_end(self):
        pass


Sequence = PyDataset  # keras.utils.Sequence is PyDataset in Keras 3


_EMPTY_GENERATOR = ("When passing a Python generator to a Keras model, the generator must yield at least one batch. "
                    "Received an empty generator.")


def _is_tf_dataset(x):
    return any(c.__module__.startswith("tensorflow.") and c.__name__ == "DatasetV2" for c in type(x).__mro__)


def _is_py_dataset(x):
    """A kerascpp or a Keras PyDataset / Sequence (Keras's own classes are accepted by shape)."""
    if isinstance(x, PyDataset):
        return True
    return any(c.__name__ in ("PyDataset", "Sequence") and c.__module__.startswith(("keras", "tf_keras", "tensorflow"))
               for c in type(x).__mro__)


def is_source(x):
    """Whether fit / evaluate / predict read x as batches (else: arrays)."""
    if x is None or isinstance(x, (np.ndarray, list, tuple, dict)) or np.isscalar(x):
        return False
    return _is_py_dataset(x) or _is_tf_dataset(x) or hasattr(x, "__next__")


def unpack(data):
    """keras.utils.unpack_x_y_sample_weight: a batch as (x, y, sample_weight)."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data
    raise ValueError("Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, "
                     f"found: {str(data)[:200]}")


class _Ordered:
    """Keras's OrderedEnqueuer: dataset[i] for the pass's indices read by `workers` threads (or
    processes), at most max_queue_size ahead, handed over in order."""

    def __init__(self, dataset):
        self.dataset = dataset
        self.pool = None
        self.queue = []
        self.last = None  # the index of the batch handed over last

    def start(self, indices):
        self.stop()
        if self.dataset.use_multiprocessing:  # each worker gets the dataset once, never per batch
            self.pool = concurrent.futures.ProcessPoolExecutor(
                self.dataset.workers, mp_context=multiprocessing.get_context("fork"), initializer=_worker_init,
                initargs=(self.dataset,))
            self.get = _worker_get
        else:
            self.pool = concurrent.futures.ThreadPoolExecutor(self.dataset.workers)
            self.get = self.dataset.__getitem__
        self.indices = iter(indices)
        for _ in range(max(1, self.dataset.max_queue_size)):
            self._submit()

    def _submit(self):
        i = next(self.indices, None)
        if i is not None:
            self.queue.append((i, self.pool.submit(self.get, i)))

    def next(self):
        if not self.queue:
            return None
        i, future = self.queue.pop(0)
        self.last = i
        self._submit()
        return i, future.result()

    def stop(self):
        if self.pool is not None:
            for _, f in self.queue:
                f.cancel()
            self.pool.shutdown(wait=True)
        self.pool, self.queue = None, []


_WORKER_DATASET = [None]  # in a worker process: its dataset


def _worker_init(dataset):
    _WORKER_DATASET[0] = dataset


def _worker_get(i):
    return _WORKER_DATASET[0][i]


class _Source:
    """What the engine reads (kerascpp::Dataset through the binding): num_batches (-1: unknown),
    begin_pass(), next() -> (xs, ys, sample_weight) or None, on_epoch_begin(), on_epoch_end().
    `standardize(x, y, sw)` turns a batch into the model's lists. Errors of the data gain a note
    naming the batch and pass through."""

    num_batches = -1

    def __init__(self, standardize):
        self.standardize = standardize
        self.index = 0  # of the next batch in the current pass

    def next(self):
        try:
            element = self._next_element()
            if element is None:
                return None
            x, y, sw = unpack(element)
            return self.standardize(x, y, sw)
        except Exception as e:
            e.add_note(f"kerascpp: raised while reading batch {self.index} of this pass over the data (counting "
                       f"from 0){self._where()}")
            raise
        finally:
            self.index += 1

    def begin_pass(self):
        self.index = 0

    def on_epoch_begin(self):
        pass

    def on_epoch_end(self):
        pass

    def _where(self):
        return ""

    def close(self):
        """Ends what reads ahead for this source (a PyDataset's workers)."""


class PyDatasetSource(_Source):
    def __init__(self, dataset, standardize, shuffle=False):
        super().__init__(standardize)
        self.dataset = dataset
        n = dataset.num_batches
        self.num_batches = -1 if n is None else int(n)
        self.shuffle = shuffle
        parallel = dataset.workers > 1 or (dataset.workers > 0 and dataset.use_multiprocessing)
        self.enqueuer = _Ordered(dataset) if parallel else None
        self.indices = iter(())

    def begin_pass(self):
        super().begin_pass()
        if self.num_batches < 0:
            indices = itertools.count()
        else:
            indices = list(range(self.num_batches))
            if self.shuffle:  # Keras shuffles a PyDataset's batch order with Python's random
                random.shuffle(indices)
        if self.enqueuer is not None:
            self.enqueuer.start(indices)
        else:
            self.indices = iter(indices)

    def _next_element(self):
        self.reading = None
        if self.enqueuer is not None:
            got = self.enqueuer.next()  # (index, the batch read by a worker)
            return None if got is None else got[1]
        self.reading = next(self.indices, None)
        return None if self.reading is None else self.dataset[self.reading]

    def _where(self):
        i = self.enqueuer.last if self.enqueuer is not None else self.reading
        return f": {type(self.dataset).__name__}[{i}]" if i is not None else ""

    def on_epoch_begin(self):
        self.dataset.on_epoch_begin()

    def on_epoch_end(self):  # the workers go on: with steps_per_epoch the pass goes on in the next epoch
        self.dataset.on_epoch_end()


    def close(self):
        if self.enqueuer is not None:
            self.enqueuer.stop()


class IteratorSource(_Source):
    """A generator or iterator: one stream; a new pass goes on with it (it cannot start again)."""

    def __init__(self, iterator, standardize):
        super().__init__(standardize)
        try:
            first = next(iterator)
        except StopIteration:
            raise ValueError(_EMPTY_GENERATOR) from None
        if not isinstance(first, (tuple, list)) and not isinstance(first, dict):
            raise ValueError("When passing a Python generator to a Keras model, the generator must return a tuple, "
                             "either (input,) or (inputs, targets) or (inputs, targets, sample_weights). "
                             f"Received: {str(first)[:200]}")
        self.iterator = itertools.chain([first], iterator)

    def _next_element(self):
        return next(self.iterator, None)



class TFDatasetSource(_Source):
    """A tf.data.Dataset, as numpy: each pass iterates it afresh."""

    def __init__(self, dataset, standardize, steps):
        super().__init__(standardize)
        self.dataset = dataset
        n = int(dataset.cardinality())
        if n == -1 and not steps:  # tf.data.INFINITE_CARDINALITY
            raise ValueError("When passing an infinitely repeating dataset, please specify a `steps_per_epoch` value "
                             "so that epoch level callbacks continue to work. The value should be equal to the number "
                             "of steps required for an epoch.")
        self.num_batches = n if n >= 0 else -1
        self.iterator = iter(())

    def begin_pass(self):
        super().begin_pass()
        self.iterator = self.dataset.as_numpy_iterator()

    def _next_element(self):
        return next(self.iterator, None)



def peek_x(x):
    """(x, the first batch's x) without losing a batch: a generator comes back chained to what was read."""
    if _is_py_dataset(x):
        return x, unpack(x[0])[0]
    if _is_tf_dataset(x):
        return x, unpack(next(x.take(1).as_numpy_iterator()))[0]
    first = next(x, None)
    if first is None:
        raise ValueError(_EMPTY_GENERATOR)
    return itertools.chain([first], x), unpack(first)[0]


def _unsupported(arg_name, arg_description, input_type):
    raise ValueError(f"When providing `x` as a {input_type}, `{arg_name}` should not be passed. Instead, "
                     f"{arg_description} should be included as part of the {input_type}.")


def _shuffle_ignored(what):
    warnings.warn(f"`shuffle=True` was passed, but will be ignored since the data `x` was provided as {what}.",
                  stacklevel=4)


def source_for(x, standardize, shuffle=False, steps=None, y=None, sample_weight=None, class_weight=None):
    """The source reading x (is_source(x) is true), with Keras's errors for the arguments only arrays
    take and its warning where shuffle does not apply."""
    kind = "PyDataset" if _is_py_dataset(x) else "tf.data.Dataset" if _is_tf_dataset(x) else "generator"
    if y is not None:
        _unsupported("y", "the targets", kind)
    if sample_weight is not None:
        _unsupported("sample_weights", "the sample weights", kind)
    if kind == "PyDataset":
        if shuffle and x.num_batches is None:
            _shuffle_ignored("an infinite PyDataset. The PyDataset is expected to already be shuffled")
        return PyDatasetSource(x, standardize, shuffle)
    if kind == "tf.data.Dataset":
        if shuffle:
            _shuffle_ignored("a tf.data.Dataset. The Dataset is expected to already be shuffled (via "
                             "`.shuffle(buffer_size)`)")
        return TFDatasetSource(x, standardize, steps)
    if class_weight:
        raise ValueError(f"Argument `class_weight` is not supported for Python generator inputs. "
                         f"Received: class_weight={class_weight}")
    if shuffle:
        _shuffle_ignored("a generator. The generator is expected to yield already-shuffled data")
    return IteratorSource(x, standardize)
