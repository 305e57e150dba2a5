"""SequenceRegressor: the chapter's model in PyTorch layouts, gradients, trace, inference, persistence,
and scikit-learn's estimator contract."""

from __future__ import annotations

import json

import numpy as np
import pytest

from glassformer import gradcheck
from glassformer.errors import DivergenceError, InputError, ModelFileError, NotReadyError, ShapeError
from glassformer.models import SequenceRegressor
from glassformer.trace import Trace

SEED_KEYS = [
    "embedding.linear.weight", "embedding.linear.bias",
    "encoder.layers.0.self_attn.in_proj_weight", "encoder.layers.0.self_attn.in_proj_bias",
    "encoder.layers.0.linear1.weight", "encoder.layers.0.linear1.bias",
    "encoder.layers.0.linear2.weight", "encoder.layers.0.linear2.bias",
    "encoder.layers.0.norm1.weight", "encoder.layers.0.norm1.bias",
    "encoder.layers.0.norm2.weight", "encoder.layers.0.norm2.bias",
    "head.weight", "head.bias",
]


def chapter(n_features: int = 1, n_targets: int = 1, **kw) -> SequenceRegressor:
    """The chapter's model with its network built for ``n_features`` inputs (untrained)."""
    m = SequenceRegressor.chapter_model(**kw)
    m.build_network(n_features, n_targets)
    return m


def seed_draws():
    """The chapter's legacy draws, in its order, as (x @ W) matrices."""
    rs = np.random.RandomState(42)
    names = [("W_e", (1, 4)), ("W_Q", (4, 4)), ("W_K", (4, 4)), ("W_V", (4, 4)), ("W_1", (4, 16)),
             ("W_2", (16, 4)), ("W_y", (4, 1))]
    return {n: rs.randn(*s) * 0.1 for n, s in names}


def seed_forward(W, x, t):
    """The chapter's forward pass written out for one sequence x (7, 1) at positions t."""
    E = x @ W["W_e"]
    P = np.column_stack([np.sin(t), np.cos(t), np.sin(t / 100.0), np.cos(t / 100.0)])
    Z = E + P
    Q, K, V = Z @ W["W_Q"], Z @ W["W_K"], Z @ W["W_V"]
    S = Q @ K.T / 2.0
    A = np.exp(S - S.max(-1, keepdims=True))
    A /= A.sum(-1, keepdims=True)

    def ln(v):
        return (v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + 1e-5)

    R = ln(Z + A @ V)
    H = ln(R + np.maximum(R @ W["W_1"], 0) @ W["W_2"])
    return H @ W["W_y"], A


def eval_forward(m, X, positions=None):
    """The network's output as predict would give it: forward in eval mode, no caches."""
    net = m.network_
    was_training = net.training
    net.eval()
    try:
        with net.no_cache():
            return net.forward(X, positions)
    finally:
        net.train(was_training)


@pytest.fixture
def batch():
    rng = np.random.default_rng(3)
    return rng.random((5, 7, 1)), rng.random((5, 7, 1))


def test_the_chapter_preset_is_the_chapters_model_with_pytorch_names():
    m = chapter()
    assert list(m.network_.state_dict()) == SEED_KEYS
    assert m.network_.num_parameters() == 4 + 4 + 48 + 12 + 64 + 16 + 64 + 4 + 16 + 4 + 1   # 237, no out_proj
    W = seed_draws()
    sd = m.network_.state_dict()
    np.testing.assert_array_equal(sd["embedding.linear.weight"], W["W_e"].T)
    np.testing.assert_array_equal(sd["encoder.layers.0.self_attn.in_proj_weight"],
                                  np.concatenate([W["W_Q"].T, W["W_K"].T, W["W_V"].T]))
    np.testing.assert_array_equal(sd["encoder.layers.0.linear1.weight"], W["W_1"].T)
    np.testing.assert_array_equal(sd["encoder.layers.0.linear2.weight"], W["W_2"].T)
    np.testing.assert_array_equal(sd["head.weight"], W["W_y"].T)
    for k in SEED_KEYS:
        if k.endswith("bias"):
            assert not sd[k].any(), k
    assert (sd["encoder.layers.0.norm1.weight"] == 1).all()


def test_forward_equals_the_seed_formulas(batch):
    X, _ = batch
    t = np.arange(1, 8, dtype=float)
    m = chapter()
    got = eval_forward(m, X, t)
    W = seed_draws()
    for b in range(len(X)):
        want, _ = seed_forward(W, X[b], t)
        np.testing.assert_allclose(got[b], want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n_features, kw", [
    (1, {}),
    (2, {"num_heads": 2, "num_layers": 2, "attn_out_proj": True, "init": "torch", "d_model": 8,
         "positional": "sinusoidal"}),
    (1, {"norm_first": True, "positional": "learned", "positional_options": {"max_len": 10}, "init": "torch"}),
    (1, {"positional": "rotary", "d_model": 8, "num_heads": 2, "init": "torch"}),
])
def test_gradients_match_finite_differences(n_features, kw):
    m = chapter(n_features, **kw)
    rng = np.random.default_rng(0)
    X = rng.random((3, 6, n_features))
    pos = np.arange(6, dtype=float) if kw.get("positional") == "learned" else rng.random((3, 6)) * 5
    report = gradcheck(m.network_, (X,), kwargs={"positions": pos})
    assert report.max_error < 1e-6, str(report)


def test_predict_keeps_no_caches_and_is_eval_mode(batch):
    X, y = batch
    m = SequenceRegressor.chapter_model(dropout=0.3, epochs=2)
    m.fit(X, y)
    assert m.network_.training              # fit leaves the network in training mode
    p1 = m.predict(X)
    p2 = m.predict(X)
    np.testing.assert_array_equal(p1, p2)   # dropout off in predict
    assert all(mod._cache is None for mod in m.network_.modules())
    assert m.network_.training


def test_fit_scans_the_windows_once_and_the_network_checks_its_inputs_again_afterwards(batch):
    """fit checks X once and runs its steps without the network's entry scan; afterwards the network,
    used on its own, refuses non-finite windows again (also after a fit that raised)."""
    X, y = batch
    m = SequenceRegressor.chapter_model(epochs=1)
    seen = []
    m.fit(X, y, callbacks=[lambda epoch, logs: seen.append(m.network_.check_inputs)])
    assert seen == [False] and m.network_.check_inputs
    bad = X.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(InputError, match="non-finite"):
        m.network_.forward(bad)
    with pytest.raises(InputError):
        m.fit(bad, y)                                   # refused by fit's own check, before training
    m2 = SequenceRegressor.chapter_model(epochs=3, lr=1e30)
    with pytest.raises(DivergenceError):
        m2.fit(X, y)                                    # diverges inside training
    assert m2.network_.check_inputs


def test_trace_symbols_shapes_and_consistency():
    m = chapter(2, d_model=8, num_heads=2, d_ff=12, num_layers=2, attn_out_proj=True, init="torch",
                positional="sinusoidal")
    X = np.random.default_rng(1).random((3, 5, 2))
    pos = np.arange(5.0)
    tr = m.trace(X, pos)
    assert isinstance(tr, Trace)
    B, L, D, Hh = 3, 5, 8, 2
    shapes = {"X": (B, L, 2), "E": (B, L, D), "P": (L, D), "Z": (B, L, D), "y_hat": (B, L, 1)}
    for i in range(2):
        shapes.update({f"layers.{i}.{s}": (B, Hh, L, D // Hh) for s in "QKV"})
        shapes.update({f"layers.{i}.{s}": (B, Hh, L, L) for s in "SA"})
        shapes.update({f"layers.{i}.{s}": (B, L, D) for s in ("U", "T1", "R", "F", "T2", "H")})
        shapes[f"layers.{i}.G"] = (B, L, 12)
    assert {k: tr[k].shape for k in shapes} == shapes
    np.testing.assert_allclose(tr["Z"], tr["E"] + tr["P"])
    np.testing.assert_allclose(tr["layers.0.A"].sum(-1), 1.0)
    np.testing.assert_allclose(tr["layers.1.T1"], tr["layers.0.H"] + tr["layers.1.U"])
    np.testing.assert_array_equal(tr["y_hat"], eval_forward(m, X, pos))
    assert tr.layer(1)["A"] is tr["layers.1.A"]
    assert tr.head(0, 1)["A"].shape == (B, L, L)
    with pytest.raises(ValueError):
        tr["E"][0, 0, 0] = 1.0            # read-only copies
    text = repr(tr)
    assert "layers.0.A" in text and "(3, 2, 5, 5)" in text
    assert all(mod._cache is None for mod in m.network_.modules())
    with pytest.raises(KeyError, match="available"):
        tr["nope"]


def test_trace_matches_the_seed_attention(batch):
    X, _ = batch
    t = np.arange(1, 8, dtype=float)
    tr = chapter().trace(X[:1], t)
    _, A = seed_forward(seed_draws(), X[0], t)
    np.testing.assert_allclose(tr["layers.0.A"][0, 0], A, rtol=1e-12)


def test_predict_with_attention_reproduces_learned_attention(batch):
    X, _ = batch
    m = chapter(num_heads=2, attn_out_proj=True, init="torch")
    A = m.trace(X).__getitem__("layers.0.A")
    np.testing.assert_allclose(m.predict_with_attention(X, None, A), eval_forward(m, X), rtol=1e-12, atol=1e-14)
    uni = m.predict_with_attention(X, None, np.full((7, 7), 1 / 7))
    assert uni.shape == (5, 7, 1) and not np.allclose(uni, eval_forward(m, X))
    with pytest.raises(ShapeError):
        m.predict_with_attention(X, None, np.eye(6))


def test_save_load_round_trip(tmp_path, batch):
    X, y = batch
    m = SequenceRegressor.chapter_model(num_heads=2, epochs=3, optimizer="adam", lr=1e-2, positional="learned",
                                        positional_options={"max_len": 16}, init="torch")
    m.fit(X, y)
    m.save(tmp_path / "m")
    assert {p.name for p in (tmp_path / "m").iterdir()} >= {"model.npz", "model.json"}
    back = SequenceRegressor.load(tmp_path / "m")
    assert back.get_params() == m.get_params()
    np.testing.assert_array_equal(back.predict(X), m.predict(X))
    assert back.history_.train_loss == m.history_.train_loss
    assert back.is_fitted_
    with pytest.raises(ModelFileError):
        m.save(tmp_path / "m")                       # no silent overwrite
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["config"]["format_version"] == 2
    assert meta["config"]["n_features_in"] == 1 and meta["config"]["n_targets"] == 1


def test_load_refuses_other_versions(tmp_path):
    from glassformer import io

    m = chapter()
    io.save_model(tmp_path / "v", dict(m.network_.state_dict()), {"format_version": 99, "params": m.get_params()},
                  kind="glassformer.SequenceRegressor")
    with pytest.raises(ModelFileError, match="format_version 99"):
        SequenceRegressor.load(tmp_path / "v")
    io.save_model(tmp_path / "k", dict(m.network_.state_dict()), {"format_version": 1}, kind="Other")
    with pytest.raises(ModelFileError, match="Other"):
        SequenceRegressor.load(tmp_path / "k")


def test_get_set_params_and_repr(batch):
    X, y = batch
    m = SequenceRegressor.chapter_model(epochs=1)
    p = m.get_params()
    assert p["d_model"] == 4 and p["positional"] == "chapter" and p["optimizer"] == "sgd"
    m.fit(X, y)
    m.set_params(lr=0.5)
    assert m.lr == 0.5 and m.network_.num_parameters() == 237      # set_params only stores
    m.set_params(d_model=8, num_heads=2, positional="sinusoidal")
    assert m.network_.state_dict()["head.weight"].shape == (1, 4)  # the fitted network is unchanged ...
    m.fit(X, y)
    assert m.network_.state_dict()["head.weight"].shape == (1, 8)  # ... until the next fit builds the new one
    with pytest.raises(ValueError, match="Invalid parameter 'dmodel'"):
        m.set_params(dmodel=3)
    text = repr(m)
    assert text.startswith("SequenceRegressor(") and "d_model=8" in text and "parameters, fitted" in text
    assert repr(SequenceRegressor()) == "SequenceRegressor()"


def test_input_errors_name_the_problem(batch):
    X, y = batch
    m = SequenceRegressor.chapter_model(epochs=1).fit(X, y)
    with pytest.raises(ShapeError, match="n_features_in_=1"):
        m.predict(np.zeros((2, 7, 3)))
    with pytest.raises(ShapeError, match="positions"):
        m.predict(X, np.arange(3))
    with pytest.raises(ShapeError, match="y must have shape"):
        m.fit(X, y[:, :5])
    bad = SequenceRegressor(d_model=6, num_heads=4)       # stored as given; refused where it is used
    with pytest.raises(InputError, match=r"d_model \(6\) must be divisible by num_heads \(4\)"):
        bad.fit(X, y)


def test_nan_targets_are_masked_and_score(batch):
    X, y = batch
    y = y.copy()
    y[0, :3] = np.nan
    m = SequenceRegressor.chapter_model(epochs=50, optimizer="adam", lr=0.01, batch_size=2)
    m.fit(X, y)
    assert np.isfinite(m.history_.train_loss).all()
    pred = m.predict(X)
    ok = np.isfinite(y)
    r2 = 1 - np.sum((y[ok] - pred[ok]) ** 2) / np.sum((y[ok] - y[ok].mean()) ** 2)
    assert m.score(X, y) == pytest.approx(r2)
    m2 = SequenceRegressor.chapter_model(epochs=50, optimizer="adam", lr=0.01, batch_size=2)
    m2.fit(X, np.where(ok, y, 123.0))          # a filled value would change training
    assert not np.allclose(m2.predict(X), pred)


def test_float32_model_stays_float32(batch):
    X, y = batch
    m = SequenceRegressor.chapter_model(dtype="float32", epochs=3)
    m.fit(X, y)
    assert m.predict(X).dtype == np.float32
    assert all(p.data.dtype == np.float32 for p in m.network_.parameters())


def test_explicit_validation_data_and_per_window_positions(batch):
    X, y = batch
    pos = np.arange(35, dtype=float).reshape(5, 7) * 0.1 + 3000.0      # depths in metres
    m = SequenceRegressor.chapter_model(epochs=3, optimizer="adam", lr=0.01, positional="sinusoidal", d_model=4)
    m.fit(X[:4], y[:4], pos[:4], X_val=X[4:], y_val=y[4:], positions_val=pos[4:])
    want = float(np.mean((m.predict(X[4:], pos[4:]) - y[4:]) ** 2))
    assert m.history_.val_loss[-1] == pytest.approx(want)
    with pytest.raises(InputError, match="positions_val"):
        m.fit(X[:4], y[:4], pos[:4], X_val=X[4:], y_val=y[4:])


def test_predict_and_score_refuse_an_unfitted_model_but_inspection_works(tmp_path, batch):
    X, y = batch
    m = SequenceRegressor.chapter_model(epochs=1)
    for call in (lambda: m.predict(X), lambda: m.score(X, y)):
        with pytest.raises(NotReadyError, match=r"not fitted.*fit\(X, y\) or load\(\).*build_network.*trace\(\)"):
            call()
    for call in (lambda: m.trace(X), lambda: m.predict_with_attention(X)):   # out of order, as predict
        with pytest.raises(NotReadyError, match="call fit.*build_network"):
            call()
    with pytest.raises(NotReadyError, match="nothing to save"):
        m.save(tmp_path / "nothing")
    # After build_network the inspection tools run on the initial weights and agree with each other.
    m.build_network(1)
    for call in (lambda: m.predict(X), lambda: m.score(X, y)):
        with pytest.raises(NotReadyError, match="not fitted"):
            call()
    out = eval_forward(m, X)
    np.testing.assert_array_equal(m.trace(X)["y_hat"], out)
    A = m.trace(X)["layers.0.A"]
    np.testing.assert_allclose(m.predict_with_attention(X, None, A), out, rtol=1e-12, atol=1e-14)
    m.save(tmp_path / "unfitted")
    with pytest.raises(NotReadyError, match="not fitted"):
        SequenceRegressor.load(tmp_path / "unfitted").predict(X)   # a saved untrained model stays unfitted
    m.fit(X, y)
    np.testing.assert_array_equal(m.predict(X), eval_forward(m, X))
    assert np.isfinite(m.score(X, y))


def test_load_accepts_a_run_folder_and_names_a_missing_path(tmp_path, batch):
    X, y = batch
    m = SequenceRegressor.chapter_model(epochs=1).fit(X, y)
    run = tmp_path / "run"
    m.save(run / "model")                      # the layout `glassformer train` writes
    (run / "config.json").write_text("{}")
    back = SequenceRegressor.load(run)
    np.testing.assert_array_equal(back.predict(X), m.predict(X))
    np.testing.assert_array_equal(SequenceRegressor.load(str(run / "model")).predict(X), m.predict(X))
    with pytest.raises(ModelFileError, match=r"nope does not exist"):
        SequenceRegressor.load(tmp_path / "nope")
    with pytest.raises(ModelFileError, match="no model found"):
        SequenceRegressor.load(tmp_path)       # an existing folder without a model


def test_save_onto_an_existing_file_says_so(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    with pytest.raises(ModelFileError, match=r"afile is an existing file, not a folder"):
        chapter().save(afile)
    with pytest.raises(ModelFileError, match=r"afile is a file"):
        chapter().save(afile / "sub")
    assert afile.read_text() == "not a folder"



def test_kernels_option_runs_fit_predict_and_trace_on_the_reference(monkeypatch, batch):
    """``kernels="reference"``: no fast kernel runs in fit, predict, score or trace, and the numbers
    are the fast model's (to 1e-12); ``kernels=None`` follows ``glassformer.kernels``."""
    from glassformer import kernels
    from glassformer.nn import functional

    X, y = batch
    fast = SequenceRegressor.chapter_model(epochs=5).fit(X, y)
    fast_prediction = fast.predict(X)

    def broken(*args, **kwargs):
        raise AssertionError("a fast kernel ran")
    for name in ("linear", "layer_norm", "scaled_dot_product_attention", "scaled_dot_product_attention_backward"):
        monkeypatch.setattr(functional, name, broken)
    reference = SequenceRegressor.chapter_model(epochs=5, kernels="reference").fit(X, y)
    np.testing.assert_allclose(reference.history_.train_loss, fast.history_.train_loss, rtol=1e-12)
    np.testing.assert_allclose(reference.predict(X), fast_prediction, rtol=1e-12, atol=1e-14)
    assert reference.trace(X)["layers.0.A"].shape == (5, 1, 7, 7)
    assert reference.get_params()["kernels"] == "reference"
    follows = SequenceRegressor.chapter_model(epochs=5)
    with kernels("reference"):
        follows.fit(X, y)
    with pytest.raises(AssertionError, match="fast kernel"):
        follows.predict(X)                                    # outside the block: the fast default
    with pytest.raises(InputError, match="kernels"):
        SequenceRegressor(kernels="math").fit(X, y)
