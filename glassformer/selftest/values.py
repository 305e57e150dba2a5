"""Published values: cases from public bug reports and papers, recomputed by the library's layers.

Inputs and expected values come from :mod:`glassformer.selftest.published` (``published.json``),
the same numbers the tests read; each check is named by what it checks and where a reader finds
the case (the bug report by project and issue number, or the paper).
"""

from __future__ import annotations

import numpy as np

from ..nn import (LayerNorm, MultiheadAttention, RotaryEmbedding, SinusoidalPositionalEncoding, causal_mask,
                  scaled_dot_product_attention)
from .published import bug_report
from .check import Check, all_ok, close

__all__ = ["value_checks"]


def _sinusoidal_odd_d_model():
    case = bug_report("sinusoidal_odd_d_model")
    got = SinusoidalPositionalEncoding(case.inputs["d_model"])(case.inputs["positions"])
    return close("PE(t = 0, 1, 2), d_model 5", got, case.expected["encoding"], 1e-8)


def _rope_one_pairing(case, interleaved: bool) -> list:
    x, t = case.inputs["x"], case.inputs["positions"]
    qi, ki = case.inputs["query_row"], case.inputs["key_row"]
    rope = RotaryEmbedding(case.inputs["head_dim"], base=case.inputs["base"], interleaved=interleaved)
    want = case.expected["interleaved" if interleaved else "half_split"]
    tag = "interleaved" if interleaved else "half-split"
    R = rope.rotate(x, t)
    offset = case.inputs["offset"]
    q, k = x[qi:qi + 1], x[ki:ki + 1]
    dots = [(rope.rotate(q, np.array([tq])) @ rope.rotate(k, np.array([tk])).T).item()
            for tq, tk in case.inputs["position_pairs"]]
    return [
        close(f"{tag} row 2", R[2], want["row_2"], 1e-8),
        close(f"{tag} offset 2", rope.rotate(x[2:3], np.array([0.0]), offset=offset)[0], R[2], 1e-12),
        close(f"{tag} position 0", R[0], x[0], 1e-15),
        close(f"{tag} <R(3)q, R(1)k> = <R(10)q, R(8)k>", dots, [want["dot"]] * len(dots), 1e-7),
    ]


def _rope_values():
    case = bug_report("rope_values")
    return all_ok(_rope_one_pairing(case, True) + _rope_one_pairing(case, False))


def _causal_attention():
    case = bug_report("causal_attention")
    q, v = case.inputs["q"], case.inputs["v"]
    allowed = ~causal_mask(len(q))
    out, w = scaled_dot_product_attention(q, q, v, allowed=allowed)
    v2 = v.copy()
    v2[2] = -7.0                               # a later value must not reach outputs 0 and 1
    out2, _ = scaled_dot_product_attention(q, q, v2, allowed=allowed)
    # The same numbers through the layer: one head of width 1, identity projections, no out_proj.
    mha = MultiheadAttention(1, 1, out_proj=False)
    mha.in_proj_weight.data[...] = 1.0
    mha.in_proj_bias.data[...] = 0.0
    layer_out, _ = mha(q, q, v, is_causal=True)
    return all_ok([
        close("weights", w, case.expected["weights"], 1e-8),
        close("output", out[:, 0], case.expected["output"], 1e-7),
        close("outputs 0, 1 after changing v[2]", out2[:2], out[:2], 0.0),
        close("MultiheadAttention(is_causal=True) output", layer_out[:, 0], out[:, 0], 1e-12),
    ])


def _layernorm(case, dtype) -> LayerNorm:
    ln = LayerNorm(len(case.inputs["weight"]), eps=case.inputs["eps"], dtype=dtype)
    ln.weight.data[...] = case.inputs["weight"]
    ln.bias.data[...] = case.inputs["bias"]
    return ln


def _layernorm_one_feature():
    case = bug_report("layernorm_one_feature")
    want = case.expected
    out = []
    for dtype in (np.float64, np.float32):
        ln = _layernorm(case, dtype)
        x = case.inputs["x"].astype(dtype)
        y = ln(x)
        dx = ln.backward(np.ones_like(x))
        name = np.dtype(dtype).name
        out += [close(f"{name} y", y, want["y"], 1e-6), close(f"{name} dx", dx, want["dx"], 1e-6),
                close(f"{name} dweight", ln.weight.grad, want["dweight"], 1e-6),
                close(f"{name} dbias", ln.bias.grad, want["dbias"], 1e-6)]
        if y.dtype != dtype or dx.dtype != dtype:
            out.append((False, f"{name}: outputs came back as {y.dtype}/{dx.dtype}"))
    return all_ok(out)


def _layernorm_backward():
    case = bug_report("layernorm_backward")
    ln = _layernorm(case, np.float64)
    ln(case.inputs["x"])
    dx = ln.backward(case.inputs["dy"])
    return all_ok([
        close("dweight", ln.weight.grad, case.expected["dweight"], 1e-7),
        close("dbias", ln.bias.grad, case.expected["dbias"], 1e-12),
        close("dx[1, 1]", dx[1, 1], case.expected["dx_1_1"], 1e-7),
    ])


#: Bug-report cases that ``glassformer check`` recomputes, and the function that does it.
_CHECKED = {
    "sinusoidal_odd_d_model": _sinusoidal_odd_d_model,
    "rope_values": _rope_values,
    "causal_attention": _causal_attention,
    "layernorm_one_feature": _layernorm_one_feature,
    "layernorm_backward": _layernorm_backward,
}


def value_checks() -> list:
    """One check per recomputed case, named ``"<what it checks> (<where to find it>)"``."""
    return [Check(bug_report(key).name, "values", func) for key, func in _CHECKED.items()]
