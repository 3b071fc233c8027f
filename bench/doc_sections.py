"""Sections of docs/benchmarks.md that other benchmark scripts own: each between
`<!-- section: NAME -->` and `<!-- /section: NAME -->`. `make bench` rewrites the page and keeps them;
a script such as bench/portable.py replaces its own."""
import os
import re

PATTERN = re.compile(r"<!-- section: (\S+) -->\n.*?<!-- /section: \1 -->\n", re.S)


def kept(path):
    """The owned sections of the page at `path`, in order, as text ('' when there are none)."""
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        return "".join(m.group(0) for m in PATTERN.finditer(f.read()))


def replace(path, name, body):
    """Puts `body` into section `name` of the page (appended when the page lacks it)."""
    block = f"<!-- section: {name} -->\n{body.rstrip()}\n<!-- /section: {name} -->\n"
    text = open(path).read() if os.path.exists(path) else ""
    found = [m for m in PATTERN.finditer(text) if m.group(1) == name]
    if found:
        text = text[:found[0].start()] + block + text[found[0].end():]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    with open(path, "w") as f:
        f.write(text)
