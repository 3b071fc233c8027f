"""keras.ops: every function Keras 3 records as an operation node, on symbolic tensors (the node Keras
adds, so the model runs natively, trains and saves what Keras reloads) and on arrays (computed at once),
also under Keras's submodules (keras.ops.image.resize, keras.ops.nn.gelu, ...). The implementation is
kerascpp/_ops.py."""
import types as _types

from ._keras_ops import OPS as _OPS
from ._ops import FUNCTIONS as _FUNCTIONS

globals().update(_FUNCTIONS)
for _module in ("numpy", "nn", "math", "core", "image", "linalg"):
    globals()[_module] = _types.SimpleNamespace(**{
        n: f for n, f in _FUNCTIONS.items() if _OPS.get(n, {}).get("module") == "keras.src.ops." + _module})
