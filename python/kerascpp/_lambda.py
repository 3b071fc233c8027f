"""The function a Lambda layer stores in a model file, loaded as Keras loads it when the user passes
`safe_mode=False` (and only then): Keras 3's {"class_name": "__lambda__", "config": {"code",
"defaults", "closure"}} and Keras 2's [code, defaults, closure] with function_type "lambda" are
Python bytecode (base64 of `marshal`); a function saved by name is looked up in custom_objects, then in
the module the file names. The function then runs under the GIL on numpy arrays."""
import base64
import builtins
import dis
import marshal
import sys
import types
import warnings

import numpy as np


def _cell(value):
    return (lambda: value).__closure__[0]


def _from_bytecode(layer, code, defaults, closure, globs):
    try:
        code = marshal.loads(base64.b64decode(code))
    except (ValueError, EOFError, TypeError) as e:
        raise ValueError(f"Lambda layer '{layer}': its stored function cannot be read by this Python "
                         f"(bytecode is specific to the Python version that saved it): {e}") from None
    # Keras saves a closure's values, a function among them by its name only (a string in its place):
    # such a name is looked up where the function's globals are (custom_objects, the module), and a
    # closure variable holding its own name that is found nowhere is refused by name. Other strings
    # stay strings, as Keras keeps them. TensorFlow's traceback filter (tf_keras saves
    # `Lambda(K.l2_normalize)` so) closes over 'op_dispatch_handler', which names no function one can
    # find: tf_keras's own loader fails there ("'str' object is not callable").
    cells = []
    for var, c in zip(code.co_freevars, closure or ()):
        if isinstance(c, str) and callable(globs.get(c)):
            c = globs[c]
        elif isinstance(c, str) and (c == var or code.co_name == "error_handler"):
            raise NotImplementedError(
                f"Lambda layer '{layer}': its stored function {code.co_qualname} uses {c!r} from the scope "
                f"it was defined in, which the file keeps only by name"
                + (" (TensorFlow's error_handler wraps a backend function the file does not name)"
                   if code.co_name == "error_handler" else "")
                + f". Pass the layer's function in custom_objects under '{layer}', or {c!r} itself.")
        cells.append(c)
    # Python looks a global up when the code reaches it (a branch never taken needs none), so a name
    # found nowhere is a warning at load; the call that reaches it fails with Python's NameError.
    missing = sorted(n for n in _global_names(code) if n not in globs and not hasattr(builtins, n))
    if missing:
        hint = " (tf_keras's loader has TensorFlow there; kerascpp never imports it)" if "tf" in missing else ""
        warnings.warn(
            f"Lambda layer '{layer}': its stored function {code.co_qualname} uses the global name(s) "
            f"{', '.join(repr(n) for n in missing)}, found neither in custom_objects nor in the module it was "
            f"saved from{hint}. Pass them in custom_objects, e.g. custom_objects={{{missing[0]!r}: ...}}.",
            stacklevel=2)
    return types.FunctionType(code, globs, code.co_name, tuple(defaults) if defaults else None,
                              tuple(_cell(c) for c in cells) if closure else None)


def _global_names(code):
    """The global names a code object (and the functions and comprehensions inside it) reads."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return names


def stored_function(config, custom_objects):
    """The function of the Lambda layer with this config (a dict), for load_model(safe_mode=False)."""
    layer = config.get("name", "?")
    # As tf_keras: numpy as np, the named module's globals when it is loaded (never imported here).
    globs = {"__builtins__": __builtins__, "np": np}
    module = config.get("module")
    if isinstance(module, str) and module in sys.modules:
        globs.update(sys.modules[module].__dict__)
    elif isinstance(module, str) and module != "builtins":
        warnings.warn(f"{module} is not loaded, but Lambda layer '{layer}' uses it. It may cause errors.")
    globs.update(custom_objects or {})
    f = config.get("function")
    if isinstance(f, dict) and f.get("class_name") == "__lambda__":
        c = f.get("config", {})
        return _from_bytecode(layer, c.get("code"), c.get("defaults"), c.get("closure"), globs)
    if isinstance(f, list) and config.get("function_type") == "lambda":
        return _from_bytecode(layer, *(list(f) + [None, None])[:3], globs)
    name = f.get("config") if isinstance(f, dict) else f
    if isinstance(name, str) and name in globs and callable(globs[name]):
        return globs[name]
    raise ValueError(f"Lambda layer '{layer}': cannot find its function {name!r}: pass it in custom_objects")
