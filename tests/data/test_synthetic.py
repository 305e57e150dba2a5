"""The seed's neighbour data set (demonstration 2) and the 100 synthetic wells."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.data import SyntheticWellParams, neighbor_dataset, split_by_sequence, synthetic_wells
from glassformer.errors import InputError


def test_neighbor_dataset_matches_the_seed_draws():
    X, y = neighbor_dataset()  # demonstration 2: 1000 x 7, noise 0.01, seed 42
    assert X.shape == y.shape == (1000, 7, 1) and X.dtype == np.float64
    # the seed's draw order, computed here independently
    rng = np.random.default_rng(42)
    phi = rng.uniform(0.05, 0.35, size=(1000, 7, 1))
    noise = rng.normal(0.0, 0.01, size=(1000, 7, 1))
    np.testing.assert_array_equal(X, phi)
    assert y[0, 0, 0] == 2.0 * phi[0, 1, 0] + noise[0, 0, 0]
    assert y[3, 6, 0] == 2.0 * phi[3, 6, 0] + noise[3, 6, 0]  # last depth: its own porosity
    # pinned values, so a change in NumPy's generator would be noticed
    np.testing.assert_allclose(X[0, :3, 0], [0.28218681, 0.18166353, 0.30757938], atol=5e-9)
    np.testing.assert_allclose(y[0, :3, 0], [0.33775027, 0.61116584, 0.50463518], atol=5e-9)
    resid = y[:, :-1, 0] - 2.0 * X[:, 1:, 0]
    assert abs(resid.std() - 0.01) < 5e-4


def test_split_by_sequence_is_the_seeds_split():
    train, test = split_by_sequence(1000)
    order = np.random.default_rng(42).permutation(1000)
    np.testing.assert_array_equal(train, order[:800])
    np.testing.assert_array_equal(test, order[800:])
    np.testing.assert_array_equal(train[:5], [978, 933, 859, 916, 127])
    assert len(np.union1d(train, test)) == 1000
    with pytest.raises(InputError, match=r"leaves an empty train or test part"):
        split_by_sequence(3, train_fraction=0.2)


def test_neighbor_dataset_errors():
    with pytest.raises(InputError, match=r"seq_length must be an integer >= 2"):
        neighbor_dataset(seq_length=1)
    with pytest.raises(InputError, match=r"noise_std must be finite and >= 0"):
        neighbor_dataset(noise_std=-0.1)


@pytest.fixture(scope="module")
def wells():
    return synthetic_wells()


def _stack(wells, mnem):
    return np.concatenate([w.curve(mnem) for w in wells])


def test_synthetic_wells_shape_units_and_determinism(wells):
    assert len(wells) == 100
    w = wells[0]
    assert w.name == "SYN-001" and wells[-1].name == "SYN-100"
    assert len(w) == 400 and w.depth_unit == "m"
    np.testing.assert_allclose(np.diff(w.depth), 0.5)
    assert w.mnemonics == ["PHI", "VSH", "PERM", "FACIES"]
    assert w.units == {"PHI": "v/v", "VSH": "v/v", "PERM": "mD", "FACIES": ""}
    again = synthetic_wells(n_wells=3)
    for a, b in zip(again, wells[:3]):  # the first wells do not depend on how many are drawn
        np.testing.assert_array_equal(a.depth, b.depth)
        for m in a.mnemonics:
            np.testing.assert_array_equal(a.curve(m), b.curve(m))
    # pinned values: the demo's reported metrics depend on these exact wells
    assert wells[0].depth[0] == 2682.5 and wells[1].depth[0] == 2729.5
    np.testing.assert_allclose(wells[0].curve("PHI")[:3], [0.08015603, 0.09123389, 0.09530426], atol=5e-9)
    np.testing.assert_allclose(wells[0].curve("PERM")[:2], [0.00834137, 0.00852805], rtol=1e-6)
    other = synthetic_wells(n_wells=3, seed=14)
    assert not np.array_equal(other[0].curve("PHI"), wells[0].curve("PHI"))


def test_synthetic_wells_statistics(wells):
    phi, vsh, perm, fac = (_stack(wells, m) for m in ("PHI", "VSH", "PERM", "FACIES"))
    assert set(np.unique(fac)) == {0.0, 1.0, 2.0}
    assert phi.min() >= 0.01 and phi.max() <= 0.40 and vsh.min() >= 0 and vsh.max() <= 1
    assert np.isfinite(perm).all() and perm.min() > 0
    mean_phi = [phi[fac == f].mean() for f in range(3)]
    assert mean_phi[0] > mean_phi[1] > mean_phi[2]  # sand > shaly sand > shale
    logk = np.log10(perm)
    assert logk[fac == 0].mean() > 1.5 and logk[fac == 2].mean() < -1.5
    assert 0.8 < np.corrcoef(phi, logk)[0, 1] < 0.99
    # beds: a few tens per 200 m well, every facies present in most wells
    n_beds = [1 + np.count_nonzero(np.diff(w.curve("FACIES"))) for w in wells]
    assert 40 < np.mean(n_beds) < 100


def _distance_to_shale_by_loop(facies, step):
    shale = np.flatnonzero(facies == 2)
    if shale.size == 0:
        return np.full(facies.shape, np.inf)
    return np.abs(np.arange(facies.size)[:, None] - shale[None, :]).min(axis=1) * step


def _rmse_of_fit(columns, target):
    A = np.column_stack([np.ones_like(target), *columns])
    coef, *_ = np.linalg.lstsq(A, target, rcond=None)
    return np.sqrt(np.mean((target - A @ coef) ** 2))


def test_context_matters_beyond_the_facies_transform(wells):
    """With facies known, a per-facies porosity transform leaves error that the documented
    cross-depth term (cementation near shale contacts) removes, down to the added noise."""
    p = SyntheticWellParams()
    phi, perm, fac = (_stack(wells, m) for m in ("PHI", "PERM", "FACIES"))
    logk = np.log10(perm)
    dist = np.concatenate([_distance_to_shale_by_loop(w.curve("FACIES"), 0.5) for w in wells])
    onehot = [(fac == f).astype(float) for f in range(3)]
    per_facies = onehot[:2] + [o * phi for o in onehot]
    cement = np.where(fac != 2, np.exp(-dist / p.cement_length_m), 0.0)
    pooled = _rmse_of_fit([phi], logk)
    facies_only = _rmse_of_fit(per_facies, logk)
    with_context = _rmse_of_fit(per_facies + [cement], logk)
    assert pooled > 0.5  # the field's single porosity transform is poor here
    assert facies_only > 1.5 * p.perm_noise_sd  # the local transform cannot explain everything
    assert abs(with_context - p.perm_noise_sd) < 0.02  # the cross-depth term explains the rest


def test_synthetic_wells_errors():
    with pytest.raises(InputError, match=r"n_samples must be an integer >= 2"):
        synthetic_wells(n_samples=1)
    with pytest.raises(InputError, match=r"step_m must be a positive number"):
        synthetic_wells(step_m=0)
