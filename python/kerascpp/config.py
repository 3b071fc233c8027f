"""keras.config's read-only settings (kerascpp computes in float32, channels_last), and the thread count
under TensorFlow's names (tf.config.threading), which Keras users set for CPU training and serving:

    import kerascpp as keras
    keras.config.threading.set_intra_op_parallelism_threads(1)   # C++: kerascpp::set_num_threads(1)

The count covers kerascpp's own loops and oneDNN's convolutions (OpenMP's threads, one pool) and
OpenBLAS's products; 0 leaves it to KERASCPP_NUM_THREADS, else OMP_NUM_THREADS, else every core.
"""
import types

from . import _kerascpp
from .backend import backend, epsilon, floatx, image_data_format


def _set_intra_op_parallelism_threads(num_threads):
    """Threads one call computes with (0: the environment's default)."""
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise TypeError(f"set_intra_op_parallelism_threads expects an int. Received: {num_threads!r}")
    _kerascpp.set_num_threads(num_threads)


def _get_intra_op_parallelism_threads():
    """The count set (or KERASCPP_NUM_THREADS's); 0 when the environment's OpenMP default applies."""
    return _kerascpp.num_threads()


threading = types.SimpleNamespace(set_intra_op_parallelism_threads=_set_intra_op_parallelism_threads,
                                  get_intra_op_parallelism_threads=_get_intra_op_parallelism_threads)

__all__ = ["backend", "epsilon", "floatx", "image_data_format", "threading"]
