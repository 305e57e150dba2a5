"""Wavelengths chosen on validation data, as the chapter suggests, and the geometric schedule."""

from __future__ import annotations

import json

import numpy as np
import pytest

from glassformer.wells import regression_metrics
from glassformer.errors import InputError, ShapeError
from glassformer.models import SequenceRegressor
from glassformer.nn.positional import SinusoidalPositionalEncoding, WavelengthPositionalEncoding
from glassformer.selection import SelectionResult, geometric_wavelengths, select_wavelengths

WINDOW = 16
PERIOD = 8.0
# Tiny models: d_model 4 (two wavelengths), Adam, full batch.
PARAMS = dict(optimizer="adam", lr=0.02, epochs=200, d_ff=16)
CANDIDATES = [[2.1, 2.3], [PERIOD, 40.0], [1000.0, 2000.0]]


def periodic_windows(n, first, last, seed):
    """Windows at absolute positions in [first, last + WINDOW): y = sin(2 pi t / 8) + 0.5 x + noise.

    The periodic part depends on the absolute position t (random window starts), so only an
    encoding with a wavelength that resolves the period can predict it beyond the training interval.
    """
    rng = np.random.default_rng(seed)
    t = (rng.integers(first, last, n)[:, None] + np.arange(WINDOW)).astype(np.float64)
    x = rng.uniform(-1.0, 1.0, (n, WINDOW, 1))
    y = np.sin(2 * np.pi * t / PERIOD) + 0.5 * x[..., 0] + rng.normal(0.0, 0.05, (n, WINDOW))
    return x, y, t


@pytest.fixture(scope="module")
def data():
    Xtr, ytr, ptr = periodic_windows(64, 0, 400, seed=1)      # training interval: positions 0..415
    Xv, yv, pv = periodic_windows(32, 400, 600, seed=2)       # validation interval: positions 400..615
    return Xtr, ytr, ptr, Xv, yv, pv


def run(data, candidates=CANDIDATES, **kw):
    Xtr, ytr, ptr, Xv, yv, pv = data
    kw.setdefault("model_params", PARAMS)
    return select_wavelengths(candidates, Xtr, ytr, Xv, yv, positions_train=ptr, positions_val=pv, **kw)


@pytest.fixture(scope="module")
def result(data):
    return run(data)


# ------------------------------------------------------------------------------------ selection
def test_the_true_period_wins(result):
    assert result.best_index == 1
    assert result.best == [PERIOD, 40.0]
    assert result.metric == "rmse"
    rmse = [row["rmse"] for row in result.table]
    # the right wavelength predicts the periodic part; the wrong ones leave most of it (sd 0.71) unexplained
    assert rmse[1] < 0.2
    assert min(rmse[0], rmse[2]) > 0.5
    assert result.table[1]["r2"] > 0.9 and max(result.table[0]["r2"], result.table[2]["r2"]) < 0.5
    assert result.ranking()[0] == 1


def test_table_rows_are_complete_and_finite(result):
    assert [row["wavelengths"] for row in result.table] == CANDIDATES
    for row in result.table:
        assert row["d_model"] == 4
        for key in ("rmse", "mae", "r2", "rmse_sd", "mae_sd", "r2_sd", "train_time_s"):
            assert np.isfinite(row[key]), key
        assert row["rmse_sd"] == 0.0               # one seed
        assert row["n"] == 32 * WINDOW
        assert row["error"] is None
        assert row["mae"] <= row["rmse"]


def test_row_equals_a_model_trained_by_hand(data, result):
    """The table's numbers are exactly those of the candidate trained on train, scored on validation."""
    Xtr, ytr, ptr, Xv, yv, pv = data
    model = SequenceRegressor.chapter_model(d_model=4, positional="wavelengths",
                                            positional_options={"wavelengths": [PERIOD, 40.0]},
                              random_state=0, **PARAMS).fit(Xtr, ytr, ptr)
    m = regression_metrics(yv, model.predict(Xv, pv)[..., 0])
    for key in ("rmse", "mae", "r2"):
        assert result.table[1][key] == pytest.approx(m[key], rel=1e-12)


def test_deterministic_with_fixed_seeds(data, result):
    again = run(data)
    strip = lambda t: [{k: v for k, v in r.items() if k != "train_time_s"} for r in t]  # noqa: E731
    assert strip(again.table) == strip(result.table)


def test_seeds_are_averaged_and_r2_is_maximised(data):
    res = run(data, candidates=[[PERIOD, 40.0], [1000.0, 2000.0]], metric="r2", seeds=(0, 1),
              model_params=dict(PARAMS, epochs=120))
    assert res.best_index == 0 and res.metric == "r2"
    assert res.ranking() == [0, 1]
    assert res.seeds == (0, 1)
    assert all(row["rmse_sd"] > 0 for row in res.table)   # two different initialisations


def test_ties_go_to_the_first_candidate_and_lengths_may_differ(data):
    # identical candidates train identically; a one-wavelength candidate gets d_model 2
    res = run(data, candidates=[[PERIOD], [1000.0, 2000.0], [PERIOD]], model_params=dict(PARAMS, epochs=5))
    assert [r["d_model"] for r in res.table] == [2, 4, 2]
    assert res.table[0]["rmse"] == res.table[2]["rmse"]
    assert res.ranking().index(0) < res.ranking().index(2)


def test_ranking_puts_unscored_candidates_last():
    rows = [dict(wavelengths=[1.0], rmse=v, mae=v, r2=v, rmse_sd=0.0, train_time_s=0.0, error=None)
            for v in (0.5, float("nan"), 0.2, 0.5)]
    res = SelectionResult(table=rows, best=[1.0], best_index=2)
    assert res.ranking() == [2, 0, 3, 1]
    assert SelectionResult(table=rows, best=[1.0], best_index=2, metric="r2").ranking() == [0, 3, 2, 1]


def test_repr_and_json(result):
    text = repr(result)
    assert "best_index=1" in text and "[8, 40]" in text and "rmse" in text
    assert text.count("\n") == len(CANDIDATES) + 1
    d = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert d["best"] == [PERIOD, 40.0] and d["best_index"] == 1 and d["ranking"][0] == 1
    assert d["table"][1]["rmse"] == pytest.approx(result.table[1]["rmse"])


def test_default_positions_and_nan_targets(data):
    # positions default to 1..seq in every window; NaN targets are skipped in training and scoring
    Xtr, ytr, _, Xv, yv, _ = data
    ytr = ytr.copy()
    yv = yv.copy()
    ytr[:, ::3] = np.nan
    yv[:, 1] = np.nan
    res = select_wavelengths([[PERIOD, 40.0]], Xtr, ytr, Xv, yv, model_params=dict(PARAMS, epochs=5))
    assert res.table[0]["n"] == 32 * (WINDOW - 1)
    assert np.isfinite(res.table[0]["rmse"])


# ------------------------------------------------------------------------------------ validation
@pytest.mark.parametrize("candidates, match", [
    ([], "candidates is empty"),
    ([[8.0, 40.0], [0.0, 3.0]], r"candidates\[1\].*non-positive"),
    ([[-2.0]], r"candidates\[0\].*non-positive"),
    ([[8.0, float("inf")]], r"candidates\[0\].*non-finite"),
    ([[]], r"candidates\[0\] is empty"),
    ("8", "candidates must be a list"),
])
def test_bad_candidates(data, candidates, match):
    with pytest.raises(InputError, match=match):
        run(data, candidates=candidates)


def test_bad_shapes(data):
    Xtr, ytr, ptr, Xv, yv, pv = data
    with pytest.raises(ShapeError, match="y_train"):
        select_wavelengths(CANDIDATES, Xtr, ytr[:10], Xv, yv)
    with pytest.raises(ShapeError, match="X_val"):
        select_wavelengths(CANDIDATES, Xtr, ytr, np.concatenate([Xv, Xv], axis=2), yv)
    with pytest.raises(ShapeError, match="X_train"):
        select_wavelengths(CANDIDATES, Xtr[..., 0], ytr, Xv, yv)
    with pytest.raises(ShapeError, match="positions_val"):
        select_wavelengths(CANDIDATES, Xtr, ytr, Xv, yv, positions_train=ptr, positions_val=pv[:, :5])
    with pytest.raises(ShapeError, match="positions_train"):
        select_wavelengths(CANDIDATES, Xtr, ytr, Xv, yv, positions_train=ptr[:3])


def test_bad_options(data):
    Xtr, ytr, _, Xv, yv, _ = data
    with pytest.raises(InputError, match="metric"):
        select_wavelengths(CANDIDATES, Xtr, ytr, Xv, yv, metric="mse")
    with pytest.raises(InputError, match="seeds is empty"):
        select_wavelengths(CANDIDATES, Xtr, ytr, Xv, yv, seeds=())
    with pytest.raises(InputError, match="seeds"):
        select_wavelengths(CANDIDATES, Xtr, ytr, Xv, yv, seeds=(0.5,))
    with pytest.raises(InputError, match=r"may not set \['d_model'\]"):
        select_wavelengths(CANDIDATES, Xtr, ytr, Xv, yv, model_params={"d_model": 8})
    with pytest.raises(InputError, match="unknown key"):
        select_wavelengths(CANDIDATES, Xtr, ytr, Xv, yv, model_params={"learning_rate": 0.1})
    with pytest.raises(InputError, match=r"candidates\[1\].*num_heads=4"):
        select_wavelengths([[1.0, 2.0], [3.0]], Xtr, ytr, Xv, yv, model_params={"num_heads": 4})
    with pytest.raises(InputError, match="y_val has no observed"):
        select_wavelengths(CANDIDATES, Xtr, ytr, Xv, np.full(yv.shape, np.nan))
    with pytest.raises(InputError, match="X_train contains non-finite"):
        select_wavelengths(CANDIDATES, np.where(Xtr > 0.9, np.nan, Xtr), ytr, Xv, yv)


# ------------------------------------------------------------------------------------ geometric schedule
def test_geometric_wavelengths_hand_values():
    assert geometric_wavelengths(1, 1000, 4) == pytest.approx([1.0, 10.0, 100.0, 1000.0], rel=1e-14)
    lams = geometric_wavelengths(0.5, 64.0, 8)
    assert lams[0] == 0.5 and lams[-1] == 64.0
    assert np.allclose(np.diff(np.log2(lams)), 1.0)     # doubling: 0.5, 1, 2, ..., 64
    assert geometric_wavelengths(3.0, 3.0, 2) == [3.0, 3.0]
    assert geometric_wavelengths(5.0, 50.0, 1) == [5.0]


def test_geometric_schedule_reproduces_the_standard_sinusoidal_encoding():
    d_model = 8
    lams = geometric_wavelengths(2 * np.pi, 2 * np.pi * 10000 ** ((d_model - 2) / d_model), d_model // 2)
    t = np.array([0.0, 1.0, 2.5, 37.0, 2501.25])
    np.testing.assert_allclose(WavelengthPositionalEncoding(d_model, lams)(t),
                               SinusoidalPositionalEncoding(d_model)(t), rtol=0, atol=1e-9)


@pytest.mark.parametrize("args, match", [
    ((0.0, 10.0, 3), "shortest"),
    ((1.0, float("nan"), 3), "longest"),
    ((10.0, 1.0, 3), "must not exceed"),
    ((1.0, 10.0, 0), "n_pairs"),
    ((1.0, 10.0, 2.5), "n_pairs"),
])
def test_geometric_wavelengths_errors(args, match):
    with pytest.raises(InputError, match=match):
        geometric_wavelengths(*args)


# ------------------------------------------------------------------------------------ demo (smoke)
def test_demo_writes_its_run_folder(tmp_path):
    from glassformer.demos import wavelengths
    from glassformer.reporting import shown

    lines = []
    with shown(lines.append):
        metrics = wavelengths.run(tmp_path / "run", n_wells=1, epochs=3, seeds=(0,))
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert (tmp_path / "run" / "figures" / "wavelength_selection.png").stat().st_size > 1000
    names = list(wavelengths.candidates())
    assert [row["name"] for row in saved["validation_table"]] == names
    assert sorted(saved["ranking"]) == sorted(names) and saved["selected"] == saved["ranking"][0]
    assert all(np.isfinite(row["rmse"]) for row in saved["validation_table"])
    assert saved["selected"] in saved["test_after_selection"]
    assert config["model"]["epochs"] == 3 and config["seeds"] == [0]
    assert metrics["selected"] == saved["selected"]
    assert any("Wrote" in str(line) for line in lines)
