"""How far an output may be from the output Keras wrote into a fixture: 1e-5 of the output's scale
(max |y|), or the larger bound the fixture's meta.json gives for that output, with its reason. The
same rule as `kerascpp verify` (tools/support/fixture_check.h explains the numbers)."""
import json
import os

import numpy as np

DEFAULT = 1e-5


def bounds(folder, count, default=DEFAULT):
    """One bound per output of the fixture in `folder` (relative to each output's scale)."""
    out = [default] * count
    meta_path = os.path.join(folder, "meta.json")
    if not os.path.exists(meta_path):
        return out
    with open(meta_path) as f:
        meta = json.load(f)
    own = meta.get("tolerance", {}).get("outputs", {})
    for i, entry in enumerate(meta.get("outputs", [])[:count]):
        out[i] = max(default, own.get(entry.get("name"), default))
    return out


def worst(got, want):
    """max |got - want| / max |want| (the scale over want's finite values; 1 where they are all zero).
    NaN and infinities in want must be matched exactly (else inf), as in tools/support/fixture_check.cpp."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if want.size == 0:
        return 0.0
    finite = np.isfinite(want)
    scale = float(np.max(np.abs(want[finite]))) if finite.any() else 0.0
    both_finite = finite & np.isfinite(got)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    if not np.all(both_finite | same):
        return float("inf")
    diff = np.abs(got[both_finite] - want[both_finite])
    return float(np.max(diff)) / (scale or 1.0) if diff.size else 0.0


def assert_matches(got_list, want_list, folder, default=DEFAULT):
    """Every output within its bound; the message names the output and how far it is."""
    assert len(got_list) == len(want_list), (len(got_list), len(want_list))
    for i, (g, w, tol) in enumerate(zip(got_list, want_list, bounds(folder, len(want_list), default))):
        assert g.shape == w.shape, f"output {i}: shape {g.shape}, Keras's {w.shape}"
        err = worst(g, w)
        assert err <= tol, f"output {i}: off by {err:.3g} of its scale, allowed {tol:.3g}"
