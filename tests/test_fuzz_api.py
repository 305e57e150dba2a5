"""Hypothesis fuzzing of the public model and data APIs.

Random shapes, dtypes, NaN/inf and masks: each call either raises a documented
:class:`~glassformer.errors.GlassformerError` or returns finite outputs (NaN only where a documented
pass-through puts it: a NaN input of a scaler or of make_windows).  Anything else -- a NumPy
broadcasting error, an IndexError, a silent NaN -- fails the test.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glassformer.data import WellLog
from glassformer.data.scaling import Log10Transform, MinMaxScaler, StandardScaler
from glassformer.data.windows import make_windows
from glassformer.errors import GlassformerError
from glassformer.models import SequenceRegressor
from glassformer.nn import MultiheadAttention

FUZZ = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SPECIALS = st.sampled_from([np.nan, np.inf, -np.inf])


@st.composite
def arrays(draw, max_rank=4, max_side=5, min_side=0):
    """A float array of random rank and shape, sometimes poisoned with NaN/inf, sometimes not float."""
    rank = draw(st.integers(0, max_rank))
    shape = tuple(draw(st.lists(st.integers(min_side, max_side), min_size=rank, max_size=rank)))
    seed = draw(st.integers(0, 2**16))
    a = np.random.default_rng(seed).standard_normal(shape)
    if a.size and draw(st.booleans()):
        n_bad = draw(st.integers(1, min(3, a.size)))
        for i in draw(st.lists(st.integers(0, a.size - 1), min_size=n_bad, max_size=n_bad)):
            a.flat[i] = draw(SPECIALS)
    kind = draw(st.sampled_from(["f8", "f8", "f8", "f4", "i8", "bool", "str", "object", "list"]))
    if kind == "str":
        return a.astype(str)
    if kind == "object":
        return a.astype(object)
    if kind == "list":
        return a.tolist()
    if kind in ("i8", "bool"):
        return np.nan_to_num(a, nan=0.0, posinf=0.0, neginf=0.0).astype(kind)
    return a.astype(kind)


def _finite(*outs):
    for o in outs:
        assert o is not None and np.isfinite(np.asarray(o, dtype=np.float64)).all(), o


@st.composite
def windows(draw, n_features=2):
    """Well-shaped ``(n, seq, n_features)`` windows and ``(n, seq, 1)`` targets, with random NaN/inf."""
    n, seq = draw(st.integers(1, 4)), draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X, y = rng.random((n, seq, n_features)), rng.random((n, seq, 1))
    for a in (X, y):
        if draw(st.booleans()):
            a[rng.random(a.shape) < draw(st.floats(0, 1))] = draw(SPECIALS)
    return X, y


# ------------------------------------------------------------------------------ the regressor
@FUZZ
@given(Xy=st.one_of(windows(), windows(), st.tuples(arrays(), arrays())), positions=st.one_of(st.none(), arrays(max_rank=2)),
       data=st.data())
def test_sequence_regressor_fit_predict_score_trace(Xy, positions, data):
    X, y = Xy
    model = SequenceRegressor(d_model=4, num_heads=2, d_ff=8, positional="sinusoidal", epochs=2, optimizer="adam",
                              lr=1e-2, batch_size=data.draw(st.sampled_from([None, 2])), validation_fraction=None)
    try:
        model.fit(X, y, positions)
    except GlassformerError:
        return
    _finite(*model.network_.state_dict().values())
    for name, call in [("predict", lambda: model.predict(X, positions)),
                       ("trace", lambda: model.trace(X, positions)["y_hat"])]:
        _finite(call())
    try:
        score = model.score(X, y, positions)
    except GlassformerError:
        return
    assert np.isnan(score) or np.isfinite(score)   # NaN: documented for constant targets (ss_tot = 0)


@pytest.fixture(scope="module")
def fitted_two_feature_model():
    rng = np.random.default_rng(3)
    model = SequenceRegressor(d_model=4, num_heads=1, d_ff=8, positional="sinusoidal", epochs=1, batch_size=2,
                              validation_fraction=None)
    return model.fit(rng.random((4, 5, 2)), rng.random((4, 5, 1)))


def test_predict_before_fit_is_refused():
    model = SequenceRegressor(d_model=4, num_heads=1, d_ff=8, positional="sinusoidal")
    with pytest.raises(GlassformerError, match="not fitted"):
        model.predict(np.zeros((1, 5, 2)))


@FUZZ
@given(X=st.one_of(arrays(), windows().map(lambda t: t[0])), positions=st.one_of(st.none(), arrays(max_rank=3)))
def test_sequence_regressor_predict_on_anything(fitted_two_feature_model, X, positions):
    model = fitted_two_feature_model
    try:
        out = model.predict(X, positions)
    except GlassformerError:
        return
    X = np.asarray(X)
    assert out.shape == X.shape[:2] + (1,)
    _finite(out)


@FUZZ
@given(y=arrays(max_rank=3, max_side=4, min_side=1), nan_frac=st.floats(0, 1))
def test_fit_with_nan_targets_masks_them(y, nan_frac):
    """Targets with gaps (NaN) anywhere: training stays finite (masked), never a silent NaN."""
    X = np.random.default_rng(0).random((3, 4, 1))
    Y = np.random.default_rng(1).random((3, 4, 1))
    Y[np.random.default_rng(2).random(Y.shape) < nan_frac] = np.nan
    model = SequenceRegressor.chapter_model(epochs=2, batch_size=2)
    if np.isnan(Y).all():
        with pytest.raises(GlassformerError, match="holds no observed"):
            model.fit(X, Y)
        return
    model.fit(X, Y)
    _finite(*model.network_.state_dict().values(), model.predict(X))
    assert len(model.history_) == 2 and all(np.isfinite(model.history_.train_loss))


# ------------------------------------------------------------------------------ attention and masks
@st.composite
def masks(draw, B, H, L, S):
    kind = draw(st.sampled_from(["none", "bool", "float", "batched", "wrong", "int", "nanfloat"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if kind == "none":
        return None
    if kind == "bool":
        return rng.random((L, S)) < draw(st.floats(0, 1))
    if kind == "float":
        m = rng.standard_normal((L, S))
        m[rng.random((L, S)) < draw(st.floats(0, 1))] = -np.inf
        return m
    if kind == "batched":
        return rng.random((B * H, L, S)) < 0.5
    if kind == "wrong":
        return rng.random((L + 1, S)) < 0.5
    if kind == "int":
        return rng.integers(0, 2, (L, S))
    m = rng.standard_normal((L, S))
    m[0, 0] = np.nan
    return m


@FUZZ
@given(data=st.data(), B=st.integers(1, 3), H=st.sampled_from([1, 2]), L=st.integers(1, 5), S=st.integers(1, 5),
       need_weights=st.booleans(), is_causal=st.booleans())
def test_multihead_attention_random_masks(data, B, H, L, S, need_weights, is_causal):
    E = 4
    att = MultiheadAttention(E, H, rng=0)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    q = rng.standard_normal((B, L, E))
    kv = rng.standard_normal((B, S, E))
    attn_mask = data.draw(masks(B, H, L, S))
    kpm = data.draw(st.sampled_from(["none", "rand", "all", "wrong"]))
    key_padding_mask = {"none": None, "rand": rng.random((B, S)) < 0.5, "all": np.ones((B, S), bool),
                        "wrong": rng.random((B + 1, S)) < 0.5}[kpm]
    try:
        out, w = att(q, kv, kv, key_padding_mask=key_padding_mask, attn_mask=attn_mask,
                     need_weights=need_weights, is_causal=is_causal, average_attn_weights=False)
    except GlassformerError:
        return
    _finite(out)
    assert out.shape == (B, L, E)
    if need_weights:
        _finite(w)
        assert w.shape == (B, H, L, S) and np.all(w >= 0)
        sums = w.sum(-1)
        assert np.all((np.abs(sums - 1) < 1e-9) | (sums == 0))   # each head's row sums to 1, or is fully masked
    grads = att.backward(np.ones_like(out))
    _finite(*(g for g in grads if g is not None), att.in_proj_weight.grad)


@FUZZ
@given(q=arrays(), k=arrays())
def test_multihead_attention_bad_inputs(q, k):
    att = MultiheadAttention(4, 2, rng=0)
    try:
        out, w = att(q, k, k)
    except GlassformerError:
        return
    _finite(out, w)


# ------------------------------------------------------------------------------ data APIs
@FUZZ
@given(X=arrays(max_rank=3, max_side=12), y=st.one_of(st.none(), arrays(max_rank=3, max_side=12)),
       window=st.one_of(st.integers(-2, 14), st.sampled_from([2.5, "4", None])),
       stride=st.one_of(st.integers(-1, 5), st.sampled_from([1.5, None])), pad_last=st.booleans())
def test_make_windows(X, y, window, stride, pad_last):
    try:
        w = make_windows(X, y, window=window, stride=stride, pad_last=pad_last)
    except GlassformerError:
        return
    Xa = np.asarray(X, dtype=np.float64).reshape(len(np.asarray(X)), -1)
    assert w.x.shape[1] == window and w.x.shape[2] == Xa.shape[1]
    np.testing.assert_array_equal(w.x, Xa[w.starts[:, None] + np.arange(window)])   # NaN passed through, never made
    _finite(w.positions)


@FUZZ
@given(X=arrays(max_rank=3, max_side=6), Z=arrays(max_rank=3, max_side=6),
       cls=st.sampled_from([MinMaxScaler, StandardScaler]))
def test_scalers(X, Z, cls):
    sc = cls()
    try:
        sc.fit(X)
    except GlassformerError:
        return
    _finite(sc.offset_, sc.scale_)
    assert np.all(sc.scale_ > 0)
    for fn in (sc.transform, sc.inverse_transform):
        try:
            out = fn(Z)
        except GlassformerError:
            continue
        Za = np.asarray(Z, dtype=np.float64)
        assert out.shape == Za.shape
        np.testing.assert_array_equal(np.isnan(out), np.isnan(Za))      # NaN exactly where the input had NaN
        assert np.isfinite(out[~np.isnan(Za)]).all()


@FUZZ
@given(X=arrays(), floor=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["x", None])))
def test_log10_transform(X, floor):
    try:
        t = Log10Transform(floor)
        out = t.transform(X)
    except GlassformerError:
        return
    Xa = np.asarray(X, dtype=np.float64)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(Xa))
    assert np.all(out[~np.isnan(Xa)] >= np.log10(np.float32(t.floor)) - 1e-6)
    _finite(t.inverse_transform(out[~np.isnan(out)]))


@FUZZ
@given(top=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["a", None, "101"])),
       base=st.one_of(st.floats(95, 110), st.floats(allow_nan=True, allow_infinity=True)),
       null_from=st.integers(0, 10))
def test_well_log_interval(top, base, null_from):
    depth = 100 + 0.5 * np.arange(10)
    phi = np.linspace(0.1, 0.3, 10)
    phi[null_from:] = np.nan
    log = WellLog(name="w", depth=depth, curves={"PHIF": phi})
    try:
        part = log.interval(top, base)
    except GlassformerError:
        return
    assert len(part) >= 1 and float(top) - 1e-6 <= part.depth[0] and part.depth[-1] <= float(base) + 1e-6
    np.testing.assert_array_equal(part.curve("PHIF"), phi[(depth >= part.depth[0]) & (depth <= part.depth[-1])])


@pytest.mark.parametrize("bad", ["not an array", [[1, 2], [3]], np.zeros((2, 3, 2), dtype=complex)])
def test_regressor_rejects_non_numeric_X_with_a_named_error(bad):
    with pytest.raises(GlassformerError, match="SequenceRegressor.fit: X"):
        SequenceRegressor().fit(bad, np.zeros((2, 3)))
