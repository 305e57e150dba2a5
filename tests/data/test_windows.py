"""Windows along depth and stitching them back (hand-computed cases, errors, fuzzing)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassformer.data import contiguous_runs, make_windows, stitch_windows, window_starts
from glassformer.errors import InputError, ShapeError


def test_make_windows_hand_computed():
    X = np.arange(10.0).reshape(10, 1)
    y = 100 + np.arange(10.0)
    depth = 3000.0 + 0.5 * np.arange(10)
    x, yw, pos, starts = make_windows(X, y, depth, window=4, stride=3)
    np.testing.assert_array_equal(starts, [0, 3, 6])
    assert x.shape == (3, 4, 1) and yw.shape == (3, 4, 1) and pos.shape == (3, 4)
    np.testing.assert_array_equal(x[:, :, 0], [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]])
    np.testing.assert_array_equal(yw[1, :, 0], [103, 104, 105, 106])
    np.testing.assert_array_equal(pos[2], [3003.0, 3003.5, 3004.0, 3004.5])


def test_last_partial_window_dropped_or_padded():
    X = np.arange(11.0)[:, None]
    plain = make_windows(X, window=4, stride=3)
    np.testing.assert_array_equal(plain.starts, [0, 3, 6])  # sample 10 is in no window
    assert plain.y is None
    np.testing.assert_array_equal(plain.positions[0], [0, 1, 2, 3])  # default: sample index
    padded = make_windows(X, window=4, stride=3, pad_last=True)
    np.testing.assert_array_equal(padded.starts, [0, 3, 6, 7])
    np.testing.assert_array_equal(padded.x[-1, :, 0], [7, 8, 9, 10])
    # pad_last adds nothing when the windows already end at the last sample
    np.testing.assert_array_equal(window_starts(10, 4, 3, pad_last=True), [0, 3, 6])
    np.testing.assert_array_equal(window_starts(7, 7, 1), [0])  # the seed's single 7-long window


def test_windows_keep_nan_and_dtype():
    X = np.array([[0.1, 1.0], [np.nan, 2.0], [0.3, 3.0]], dtype=np.float32)
    w = make_windows(X, None, None, window=2, stride=1)
    assert w.x.dtype == np.float32 and w.x.shape == (2, 2, 2)
    assert np.isnan(w.x[0, 1, 0]) and np.isnan(w.x[1, 0, 0])


def test_windows_errors():
    with pytest.raises(InputError, match=r"the sequence has 5 samples, shorter than the window of 7"):
        make_windows(np.zeros((5, 1)), window=7)
    with pytest.raises(ShapeError, match=r"y has 4 samples, X has 5"):
        make_windows(np.zeros((5, 1)), np.zeros(4), window=2)
    with pytest.raises(ShapeError, match=r"positions has 3 entries, X has 5 samples"):
        make_windows(np.zeros((5, 1)), positions=np.arange(3), window=2)
    with pytest.raises(InputError, match=r"stride must be an integer >= 1, got 0"):
        make_windows(np.zeros((5, 1)), window=2, stride=0)
    with pytest.raises(ShapeError, match=r"X must be 1-D or 2-D"):
        make_windows(np.zeros((5, 1, 1)), window=2)
    with pytest.raises(InputError, match=r"positions contains non-finite"):
        make_windows(np.zeros((3, 1)), positions=[0.0, np.nan, 2.0], window=2)


def test_stitch_averages_overlaps_hand_computed():
    # windows of 4 at starts 0, 2 over n = 7; window 0 predicts 1.0 everywhere, window 1 predicts 3.0
    pred = np.stack([np.full((4, 1), 1.0), np.full((4, 1), 3.0)])
    out = stitch_windows(pred, np.array([0, 2]), 7)
    np.testing.assert_array_equal(out[:, 0], [1, 1, 2, 2, 3, 3, np.nan])  # sample 6 uncovered
    two_d = stitch_windows(pred[..., 0], np.array([0, 2]), 6)
    assert two_d.shape == (6,)
    # NaN predictions are left out of the mean
    pred[1, 0, 0] = np.nan
    np.testing.assert_array_equal(stitch_windows(pred, np.array([0, 2]), 6)[2, 0], 1.0)


def test_windows_stitch_round_trip():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(23, 3))
    w = make_windows(X, window=5, stride=2, pad_last=True)
    np.testing.assert_allclose(stitch_windows(w.x, w.starts, 23), X, rtol=1e-15, atol=0)  # (a + a) / 2 rounds


def test_stitch_errors():
    with pytest.raises(ShapeError, match=r"starts must be integers of shape \(2,\)"):
        stitch_windows(np.zeros((2, 3, 1)), np.array([0.0, 1.0]), 5)
    with pytest.raises(InputError, match=r"do not fit in n=4"):
        stitch_windows(np.zeros((2, 3, 1)), np.array([0, 2]), 4)


def test_contiguous_runs():
    assert contiguous_runs([False, True, True, False, True]) == [(1, 3), (4, 5)]
    assert contiguous_runs([True, True]) == [(0, 2)]
    assert contiguous_runs([False]) == []


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 40),
    window=st.integers(1, 12),
    stride=st.integers(1, 6),
    pad_last=st.booleans(),
    n_features=st.integers(1, 3),
)
def test_windows_fuzz(n, window, stride, pad_last, n_features):
    """Any sizes: either the documented InputError (too short) or windows that stitch back exactly."""
    X = np.arange(n * n_features, dtype=np.float64).reshape(n, n_features)
    if n < window:
        with pytest.raises(InputError, match=f"has {n} samples, shorter than the window of {window}"):
            make_windows(X, window=window, stride=stride, pad_last=pad_last)
        return
    w = make_windows(X, window=window, stride=stride, pad_last=pad_last)
    assert w.x.shape == (len(w.starts), window, n_features)
    np.testing.assert_array_equal(w.x[:, 0, :], X[w.starts])
    back = stitch_windows(w.x, w.starts, n)
    covered = np.zeros(n, dtype=bool)
    for s in w.starts:
        covered[s : s + window] = True
    np.testing.assert_array_equal(back[covered], X[covered])  # averaging equal values is exact here
    assert np.isnan(back[~covered]).all()
    if pad_last and stride <= window:  # with stride > window the gaps between windows stay uncovered
        assert covered.all()
