"""Scalers fitted on the training interval only, their JSON form, and log10 with a floor."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassformer.data import Log10Transform, MinMaxScaler, StandardScaler, scaler_from_dict
from glassformer.errors import InputError, NotReadyError, ShapeError


def test_minmax_fitted_on_train_only_no_leakage():
    depth = np.arange(6.0)
    phi = np.array([1.0, 3.0, np.nan, 5.0, 9.0, 13.0])
    train = depth <= 3  # training interval: 1, 3, NaN, 5 -> min 1, max 5
    scaler = MinMaxScaler().fit(phi[train])
    np.testing.assert_array_equal(scaler.data_min_, [1.0])
    np.testing.assert_array_equal(scaler.data_max_, [5.0])
    # the forecast interval uses the training min/max: (9-1)/4 = 2, (13-1)/4 = 3 (beyond 1, as it should)
    np.testing.assert_array_equal(scaler.transform(phi[~train]), [2.0, 3.0])
    np.testing.assert_array_equal(scaler.transform(phi[train]), [0.0, 0.5, np.nan, 1.0])
    leaky = MinMaxScaler().fit(phi)  # what fitting on everything would give instead
    assert leaky.transform(phi[~train])[-1] == 1.0


def test_minmax_constant_column_maps_to_zero_and_inverse():
    X = np.array([[2.0, 1.0], [2.0, 3.0], [2.0, 2.0]])
    s = MinMaxScaler().fit(X)
    Z = s.transform(X)
    np.testing.assert_array_equal(Z, [[0.0, 0.0], [0.0, 1.0], [0.0, 0.5]])
    np.testing.assert_array_equal(s.inverse_transform(Z), X)
    np.testing.assert_array_equal(s.transform([[4.0, 5.0]]), [[2.0, 2.0]])  # (4-2)/1 and (5-1)/2


def test_standard_scaler_values_nan_and_constant():
    X = np.array([[1.0, 7.0], [np.nan, 7.0], [3.0, 7.0]])
    s = StandardScaler().fit(X)
    np.testing.assert_array_equal(s.mean_, [2.0, 7.0])
    np.testing.assert_array_equal(s.std_, [1.0, 0.0])
    np.testing.assert_array_equal(s.transform(X), [[-1.0, 0.0], [np.nan, 0.0], [1.0, 0.0]])


def test_scaler_acts_on_last_axis_of_windows_and_keeps_float32():
    s = MinMaxScaler().fit(np.array([[0.0, 10.0], [2.0, 20.0]]))
    windows = np.array([[[1.0, 15.0], [2.0, 20.0]]], dtype=np.float32)  # (1, 2, 2)
    out = s.transform(windows)
    assert out.dtype == np.float32 and out.shape == (1, 2, 2)
    np.testing.assert_array_equal(out, [[[0.5, 0.5], [1.0, 1.0]]])
    np.testing.assert_allclose(s.inverse_transform(out), windows)


def test_scaler_errors():
    with pytest.raises(NotReadyError, match=r"call fit\(\) before transform"):
        MinMaxScaler().transform([1.0])
    s = MinMaxScaler().fit(np.ones((3, 2)))
    with pytest.raises(ShapeError, match=r"X has 3 features on its last axis .*fitted on 2"):
        s.transform(np.ones((4, 3)))
    with pytest.raises(InputError, match=r"column 1 of X has no finite value"):
        StandardScaler().fit(np.array([[1.0, np.nan], [2.0, np.nan]]))
    with pytest.raises(InputError, match=r"non-finite"):
        MinMaxScaler().fit(np.array([1.0, np.inf]))


@pytest.mark.parametrize("cls", [MinMaxScaler, StandardScaler])
def test_scaler_json_round_trip(cls):
    X = np.array([[0.1, 5.0], [0.3, 1.0], [0.2, 3.0]])
    s = cls().fit(X)
    d = json.loads(json.dumps(s.to_dict()))
    for restored in (cls.from_dict(d), scaler_from_dict(d)):
        assert type(restored) is cls
        np.testing.assert_array_equal(restored.transform(X), s.transform(X))
    with pytest.raises(InputError, match=r"expected kind"):
        cls.from_dict({"kind": "other"})
    with pytest.raises(NotReadyError):
        cls().to_dict()


def test_log10_floor():
    t = Log10Transform(floor=1e-3)
    k = np.array([0.0, -5.0, 1e-4, 1e-3, 10.0, np.nan])
    np.testing.assert_allclose(t.transform(k), [-3, -3, -3, -3, 1, np.nan])
    assert (t.transform(k)[:4] == np.log10(1e-3)).all()  # 0, -5 and 1e-4 are raised to the floor exactly
    np.testing.assert_allclose(t.inverse_transform(np.array([-3.0, 1.0])), [1e-3, 10.0])
    np.testing.assert_allclose(Log10Transform(floor=0.01).transform([0.0, 100.0]), [-2.0, 2.0])
    assert t.transform(np.array([1.0], dtype=np.float32)).dtype == np.float32
    restored = scaler_from_dict(json.loads(json.dumps(t.to_dict())))
    assert isinstance(restored, Log10Transform) and restored.floor == 1e-3
    for bad in (0.0, -1.0, np.nan, "x"):
        with pytest.raises(InputError, match=r"floor must be"):
            Log10Transform(floor=bad)
    with pytest.raises(InputError, match=r"unknown kind 'robust'"):
        scaler_from_dict({"kind": "robust"})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(-1e6, 1e6), st.just(float("nan"))), min_size=1, max_size=20))
def test_scalers_fuzz(values):
    """Any column with NaN: either the documented InputError (no finite value) or finite outputs."""
    x = np.array(values)
    for cls in (MinMaxScaler, StandardScaler):
        if not np.isfinite(x).any():
            with pytest.raises(InputError, match="no finite value"):
                cls().fit(x)
            continue
        z = cls().fit(x).transform(x)
        assert np.isfinite(z[np.isfinite(x)]).all() and np.isnan(z[np.isnan(x)]).all()
