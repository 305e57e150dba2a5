"""PyTorch parity helpers shared by the nn tests, as the fixture ``tp``.

Tolerances: 1e-10 absolute in float64; 1e-5 relative (to the largest reference entry) in float32.
Sizes are all distinct (batch 3, L 5, S 4, d_model 12, heads 3, d_ff 20) so a transposed or
mis-reshaped axis cannot pass by accident.  Torch modules run in training mode with dropout 0,
which keeps them off their fused inference fast path.

Where PyTorch returns NaN for a fully masked query row the tests assert our rule instead (zero
weights, output = out_proj.bias, zero gradients) and compare every other entry with a PyTorch run in
which those rows are unmasked and receive no upstream gradient.
"""

from __future__ import annotations

import sys
import zlib

import numpy as np
import pytest

from glassformer.nn import causal_mask

B, L, S, E, H, DFF = 3, 5, 4, 12, 3, 20
MASKS = ["none", "causal", "bool2d", "bool3d", "float2d", "float3d_inf", "kpm_bool", "kpm_float", "fully_masked"]


@pytest.fixture
def tp():
    """This module (helpers and sizes) with ``tp.torch``; skips the test when torch is not installed."""
    module = sys.modules[__name__]
    module.torch = pytest.importorskip("torch")
    module.DTYPES = {np.float64: module.torch.float64, np.float32: module.torch.float32}
    return module


def assert_match(ours, ref, dtype, what):
    ours, ref = np.asarray(ours, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} vs torch {ref.shape}"
    assert np.isfinite(ours).all(), f"{what}: non-finite values"
    err = float(np.max(np.abs(ours - ref), initial=0.0))
    if dtype == np.float64:
        assert err <= 1e-10, f"{what}: max abs error {err:.3e} > 1e-10"
    else:
        scale = max(float(np.max(np.abs(ref), initial=0.0)), 1e-6)
        assert err / scale <= 1e-5, f"{what}: relative error {err / scale:.3e} > 1e-5"


def load(ours, tmod):
    ours.load_state_dict({k: v.detach().numpy() for k, v in tmod.state_dict().items()})


def t(a, requires_grad=False):
    return torch.tensor(a, requires_grad=requires_grad)  # noqa: F821 - set by the fixture


def compare_param_grads(ours, tmod, dtype, extra=None):
    tparams = dict(tmod.named_parameters())
    names = [n for n, _ in ours.named_parameters()]
    assert names == list(tparams), "parameter names/order differ from torch"
    for name, p in ours.named_parameters():
        ref = tparams[name].grad.numpy().astype(np.float64)
        if extra and name in extra:
            ref = ref + extra[name]
        assert_match(p.grad, ref, dtype, f"grad {name}")


def seed(*parts) -> int:
    """A reproducible seed per test case (``hash`` of a str changes between runs)."""
    return zlib.crc32(repr(parts).encode())


def rand(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def make_masks(kind, rng, Lq, Sk, dtype):
    """Return (our kwargs, torch kwargs) for one mask kind."""
    if kind == "none":
        return {}, {}
    if kind == "causal":
        return {"is_causal": True}, {"attn_mask": t(causal_mask(Lq, Sk))}
    if kind == "bool2d":
        m = rng.random((Lq, Sk)) < 0.3
        m[:, 0] = False                                    # keep every row partly open
        return {"attn_mask": m}, {"attn_mask": t(m)}
    if kind == "bool3d":
        m = rng.random((B * H, Lq, Sk)) < 0.3
        m[..., 1] = False
        return {"attn_mask": m}, {"attn_mask": t(m)}
    if kind == "float2d":
        m = rng.standard_normal((Lq, Sk)).astype(dtype)
        return {"attn_mask": m}, {"attn_mask": t(m)}
    if kind == "float3d_inf":
        m = rng.standard_normal((B * H, Lq, Sk)).astype(dtype)
        m[rng.random(m.shape) < 0.3] = -np.inf
        m[..., 0] = 0.5
        return {"attn_mask": m}, {"attn_mask": t(m)}
    if kind == "kpm_bool":
        k = np.zeros((B, Sk), bool)
        k[0, -1] = k[2, 1:3] = True
        return {"key_padding_mask": k}, {"key_padding_mask": t(k)}
    if kind == "kpm_float":
        k = rng.standard_normal((B, Sk)).astype(dtype)
        k[1, -2:] = -np.inf
        return {"key_padding_mask": k}, {"key_padding_mask": t(k)}
    raise AssertionError(kind)


def fully_masked_setup(rng, Lq, Sk):
    """Query row 1 blocked by attn_mask in every batch, and batch 1 fully padded."""
    m = rng.random((Lq, Sk)) < 0.3
    m[:, 0] = False
    m[1, :] = True
    k = np.zeros((B, Sk), bool)
    k[1, :] = True
    k[2, -1] = True
    blocked = np.zeros((B, Lq), bool)
    blocked[:, 1] = True
    blocked[1, :] = True
    m_t, k_t = m.copy(), k.copy()
    m_t[1, :] = False                      # torch reference: the blocked rows unmasked ...
    k_t[1, :] = False
    return {"attn_mask": m, "key_padding_mask": k}, {"attn_mask": t(m_t), "key_padding_mask": t(k_t)}, blocked
