"""The chapter's way of training demonstration 2: one sequence at a time, gradients summed per batch.

The chapter's code (`train_transformer_sequences`) runs forward and backward for each 7-long sequence of a
mini-batch separately, adds the 18 gradients, divides by the batch size and steps.  This module is
an independent re-implementation of that *schedule* (not of glassformer: plain NumPy arrays in the
chapter's ``x @ W`` layout), written here only to time it beside the batched library.  The maths is
the same model as :meth:`glassformer.models.SequenceRegressor.chapter_model`: input embedding,
fixed positional encoding, one single-head attention without output projection, post-norm
residual blocks with LayerNorm (eps 1e-5), a ReLU feed-forward network and a linear head.
"""

from __future__ import annotations

import numpy as np

EPS = 1e-5


def params_from_state(state: dict) -> dict:
    """Seed-layout arrays (``x @ W``) from a glassformer SequenceRegressor ``state_dict``."""
    d = state["embedding.linear.weight"].shape[0]
    qkv = state["encoder.layers.0.self_attn.in_proj_weight"]
    b_qkv = state["encoder.layers.0.self_attn.in_proj_bias"]
    layer = "encoder.layers.0."
    p = {
        "We": state["embedding.linear.weight"].T, "be": state["embedding.linear.bias"],
        "Wq": qkv[:d].T, "Wk": qkv[d:2 * d].T, "Wv": qkv[2 * d:].T,
        "bq": b_qkv[:d], "bk": b_qkv[d:2 * d], "bv": b_qkv[2 * d:],
        "W1": state[layer + "linear1.weight"].T, "b1": state[layer + "linear1.bias"],
        "W2": state[layer + "linear2.weight"].T, "b2": state[layer + "linear2.bias"],
        "g1": state[layer + "norm1.weight"], "c1": state[layer + "norm1.bias"],
        "g2": state[layer + "norm2.weight"], "c2": state[layer + "norm2.bias"],
        "Wy": state["head.weight"].T, "by": state["head.bias"],
    }
    return {k: np.array(v, dtype=np.float64, copy=True) for k, v in p.items()}


def _norm(v, g, c):
    mu = v.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(v.var(axis=-1, keepdims=True) + EPS)
    vhat = (v - mu) * rstd
    return vhat * g + c, vhat, rstd


def _norm_back(dout, vhat, rstd, g):
    dvhat = dout * g
    dv = rstd * (dvhat - dvhat.mean(axis=-1, keepdims=True) - vhat * (dvhat * vhat).mean(axis=-1, keepdims=True))
    return dv, (dout * vhat).sum(axis=0), dout.sum(axis=0)


def sequence_loss_and_grads(p: dict, x: np.ndarray, pe: np.ndarray, y: np.ndarray):
    """MSE and its gradients for ONE sequence ``x (L, 1)``, targets ``y (L, 1)``, encoding ``pe (L, d)``."""
    z = x @ p["We"] + p["be"] + pe
    q, k, v = z @ p["Wq"] + p["bq"], z @ p["Wk"] + p["bk"], z @ p["Wv"] + p["bv"]
    scale = 1.0 / np.sqrt(q.shape[1])
    s = q @ k.T * scale
    a = np.exp(s - s.max(axis=-1, keepdims=True))
    a /= a.sum(axis=-1, keepdims=True)
    r, r_hat, r_std = _norm(z + a @ v, p["g1"], p["c1"])
    pre = r @ p["W1"] + p["b1"]
    h_ff = np.maximum(pre, 0.0)
    out, o_hat, o_std = _norm(r + h_ff @ p["W2"] + p["b2"], p["g2"], p["c2"])
    y_hat = out @ p["Wy"] + p["by"]
    diff = y_hat - y
    grads = {}
    dy = 2.0 * diff / diff.size
    grads["Wy"], grads["by"] = out.T @ dy, dy.sum(axis=0)
    dt2, grads["g2"], grads["c2"] = _norm_back(dy @ p["Wy"].T, o_hat, o_std, p["g2"])
    grads["W2"], grads["b2"] = h_ff.T @ dt2, dt2.sum(axis=0)
    dpre = (dt2 @ p["W2"].T) * (pre > 0)
    grads["W1"], grads["b1"] = r.T @ dpre, dpre.sum(axis=0)
    dt1, grads["g1"], grads["c1"] = _norm_back(dt2 + dpre @ p["W1"].T, r_hat, r_std, p["g1"])
    da = dt1 @ v.T
    dv = a.T @ dt1
    ds = a * (da - (da * a).sum(axis=-1, keepdims=True)) * scale
    dq, dk = ds @ k, ds.T @ q
    dz = dt1.copy()
    for name, dproj in (("q", dq), ("k", dk), ("v", dv)):
        grads["W" + name] = z.T @ dproj
        grads["b" + name] = dproj.sum(axis=0)
        dz += dproj @ p["W" + name].T
    grads["We"], grads["be"] = x.T @ dz, dz.sum(axis=0)
    return float(np.mean(diff * diff)), grads


def train_per_sequence(p: dict, X, Y, pe, *, epochs: int, batch_size: int = 32, lr: float = 0.3,
                       seed: int = 42) -> list:
    """Mini-batch SGD with a Python loop over the sequences of each batch; returns the mean batch MSE per epoch.

    Batches follow ``numpy.random.default_rng(seed).permutation`` each epoch, as the chapter's code and
    glassformer's Trainer do, so the losses equal the batched run's.
    """
    rng = np.random.default_rng(seed)
    n = len(X)
    history = []
    for _ in range(epochs):
        order = rng.permutation(n)
        losses = []
        for s in range(0, n, batch_size):
            idx = order[s:s + batch_size]
            total = {k: np.zeros_like(v) for k, v in p.items()}
            batch_loss = 0.0
            for i in idx:
                loss_i, g_i = sequence_loss_and_grads(p, X[i], pe, Y[i])
                batch_loss += loss_i
                for k in total:
                    total[k] += g_i[k]
            for k in p:
                p[k] -= lr * (total[k] / len(idx))
            losses.append(batch_loss / len(idx))
        history.append(float(np.mean(losses)))
    return history
