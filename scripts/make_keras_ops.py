"""Writes python/kerascpp/_keras_ops.py from real Keras 3: for every keras.ops function that builds an
operation when given a symbolic tensor (`Mean(axis=axis, keepdims=keepdims).symbolic_call(x)`), the
function's parameters in order with their defaults, the operation's class and module, and which
parameters go to its constructor (the node's config, as Keras saves it) and which to its call (the
node's arguments). kerascpp.ops builds the same op nodes from symbolic tensors, so that a Keras script's
`keras.ops.mean(x, axis=1)` makes the node Keras makes and saves what Keras reloads;
tests/python/test_keras_ops.py checks the table is current.

    .venv/bin/python scripts/make_keras_ops.py [--check]
"""
import ast
import importlib
import inspect
import json
import os
import sys
import textwrap

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "python", "kerascpp", "_keras_ops.py")
MODULES = ["numpy", "nn", "math", "core", "image", "linalg"]
REQUIRED = "__required__"


def op_call(fn, mod):
    """The `Class(...)...(...)` call of an operation class in fn's source: (class node, call node) or None."""
    from keras.src.ops.operation import Operation
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    found = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        if isinstance(f, ast.Attribute) and f.attr == "symbolic_call":
            f = f.value
        if isinstance(f, ast.Call) and isinstance(f.func, ast.Name):
            k = getattr(mod, f.func.id, None)
            if inspect.isclass(k) and issubclass(k, Operation):
                found.append((f, n))
    return found[0] if len({c.func.id for c, _ in found}) == 1 else None


def jsonable(v):
    try:
        json.dumps(v)
        return True
    except (TypeError, ValueError):
        return False


def entry(name, fn, mod):
    """The table's entry for keras.ops.<name>, or None where its arguments are computed."""
    found = op_call(fn, mod)
    if found is None:
        return None
    ctor, call = found
    cls = getattr(mod, ctor.func.id)
    sig = inspect.signature(fn)
    params = []
    for p in sig.parameters.values():
        if p.kind == p.VAR_KEYWORD:  # passed on as keywords of the call: none supported (einsum's)
            continue
        if p.kind == p.VAR_POSITIONAL:  # einsum(subscripts, *operands): the rest of the positionals
            params.append(["*" + p.name, []])
            continue
        default = REQUIRED if p.default is p.empty else p.default
        if isinstance(default, tuple):
            default = list(default)
        if not jsonable(default):
            return None
        params.append([p.name, default])
    names = [p[0].lstrip("*") for p in params]
    init_names = [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "name")]
    config = {}
    for i, a in enumerate(ctor.args):
        if not (isinstance(a, ast.Name) and a.id in names and i < len(init_names)):
            return None
        config[init_names[i]] = a.id
    for kw in ctor.keywords:
        if kw.arg == "name":
            continue
        if not (kw.arg and isinstance(kw.value, ast.Name) and kw.value.id in names):
            return None
        config[kw.arg] = kw.value.id
    args = []
    for a in call.args:
        if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name) and "*" + a.value.id in [p[0] for p in params]:
            args.append("*" + a.value.id)
            continue
        if not (isinstance(a, ast.Name) and a.id in names):
            return None
        args.append(a.id)
    kwargs = {}
    for kw in call.keywords:
        if kw.arg is None:  # **kwargs passed on
            continue
        if not (isinstance(kw.value, ast.Name) and kw.value.id in names):
            return None
        kwargs[kw.arg] = kw.value.id
    return {"module": f"keras.src.ops.{mod.__name__.rsplit('.', 1)[1]}", "class": cls.__name__, "params": params,
            "config": config, "args": args, "kwargs": kwargs}


def table():
    import keras
    out = {}
    for m in MODULES:
        mod = importlib.import_module("keras.src.ops." + m)
        for name, fn in sorted(vars(mod).items()):
            if not inspect.isfunction(fn) or name.startswith("_") or fn.__module__ != mod.__name__:
                continue
            if getattr(keras.ops, name, None) is not fn and getattr(getattr(keras.ops, m, None), name, None) is not fn:
                continue
            e = entry(name, fn, mod)
            if e is not None:
                out.setdefault(name, e)
    return out


def render(t):
    lines = ['"""Written by scripts/make_keras_ops.py from Keras ' + __import__("keras").__version__ +
             ': keras.ops functions -> the op node Keras',
             "builds on symbolic tensors (its class and module, the function's parameters in order with defaults,",
             'which go to the node\'s config and which to its call). Do not edit."""',
             f"REQUIRED = {REQUIRED!r}", "OPS = {"]
    for name in sorted(t):
        lines.append(f"    {name!r}: {json.dumps(t[name], sort_keys=True)},")
    lines.append("}")
    return "\n".join(lines).replace(": true", ": True").replace(": false", ": False").replace(": null", ": None") \
        .replace("[true", "[True").replace("[false", "[False").replace("[null", "[None").replace(", null]", ", None]") \
        .replace(", true]", ", True]").replace(", false]", ", False]") + "\n"


def main():
    text = render(table())
    if "--check" in sys.argv:
        with open(OUT) as f:
            if f.read() != text:
                sys.exit(f"{OUT} is stale: run scripts/make_keras_ops.py")
        return
    with open(OUT, "w") as f:
        f.write(text)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
