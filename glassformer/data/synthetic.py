"""Synthetic data: the neighbour sequences of "demonstration 2: the next depth", and 100 wells.

* :func:`neighbor_dataset` and :func:`split_by_sequence` reproduce, draw for draw, the data and
  the 80/20 split of demonstration 2 of the chapter (Pyrcz, 2024): target at depth i = 2 x
  porosity at depth i+1.
* :func:`synthetic_wells` defines the "100 synthetic well logs" that the chapter announces but
  never specifies: layered facies, compacting porosity with correlated noise, shale volume, and
  permeability from a facies-dependent porosity transform plus a cross-depth term (cementation
  near shale contacts) that a point-by-point transform cannot capture but a model that sees the
  neighbouring depths can.  All constants live in :class:`SyntheticWellParams`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_positive_int
from ..errors import InputError
from .welllog import WellLog

__all__ = ["SyntheticWellParams", "neighbor_dataset", "split_by_sequence", "synthetic_wells"]


def neighbor_dataset(
    n_sequences: int = 1000, seq_length: int = 7, noise_std: float = 0.01, seed: int = 42
) -> tuple[np.ndarray, np.ndarray]:
    """The data of demonstration 2: each target is twice the porosity one depth further down.

    With ``rng = numpy.random.default_rng(seed)``, drawn in this order:

    * porosity ``X = rng.uniform(0.05, 0.35, (n_sequences, seq_length, 1))`` (fraction v/v);
    * ``y[:, i] = 2 X[:, i + 1]`` for ``i < seq_length - 1`` and ``y[:, -1] = 2 X[:, -1]``
      (the last depth has no deeper neighbour);
    * ``y += rng.normal(0, noise_std, y.shape)``.

    The defaults are demonstration 2's call (1,000 sequences of 7, noise sd 0.01, seed 42); the
    chapter's own function defaults to noise sd 0.02, which its demonstration does not use.

    Returns
    -------
    X, y : ndarray (n_sequences, seq_length, 1), float64

    Raises
    ------
    InputError
        Non-positive sizes (``seq_length`` must be >= 2) or a negative ``noise_std``.
    """
    n_sequences = check_positive_int(n_sequences, "n_sequences", "neighbor_dataset")
    seq_length = check_positive_int(seq_length, "seq_length", "neighbor_dataset", minimum=2)
    if not (np.isfinite(noise_std) and noise_std >= 0):
        raise InputError(f"neighbor_dataset: noise_std must be finite and >= 0, got {noise_std!r}")
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.05, 0.35, size=(n_sequences, seq_length, 1))
    y = np.empty_like(X)
    y[:, :-1] = 2.0 * X[:, 1:]
    y[:, -1] = 2.0 * X[:, -1]
    y += rng.normal(0.0, noise_std, size=y.shape)
    return X, y


def split_by_sequence(n: int, train_fraction: float = 0.8, seed: int = 42) -> tuple[np.ndarray, np.ndarray]:
    """Split ``n`` sequences (or wells) into train/test indices, as demonstration 2 does.

    ``order = default_rng(seed).permutation(n)``; the first ``int(train_fraction * n)`` are the
    training indices, the rest the test indices (whole sequences, never single depths).

    Returns
    -------
    train_idx, test_idx : ndarray of int

    Raises
    ------
    InputError
        If ``n < 2`` or ``train_fraction`` leaves either part empty.
    """
    n = check_positive_int(n, "n", "split_by_sequence", minimum=2)
    n_train = int(train_fraction * n)
    if not 0 < n_train < n:
        raise InputError(
            f"split_by_sequence: train_fraction={train_fraction!r} of n={n} leaves an empty train or test part"
        )
    order = np.random.default_rng(seed).permutation(n)
    return order[:n_train], order[n_train:]


@dataclass(frozen=True)
class SyntheticWellParams:
    """Every constant of :func:`synthetic_wells` (depths in m, porosity v/v, permeability mD).

    Facies codes: 0 = sand, 1 = shaly sand, 2 = shale.

    Attributes
    ----------
    transition : 3x3 tuple
        Probability that a bed of facies *row* is followed (below it) by a bed of facies
        *column*.  The diagonal is 0: two touching beds of one facies are one bed.
    initial : 3-tuple
        Probabilities of the facies of the top bed.
    mean_thickness_m : 3-tuple, default (4.0, 2.0, 3.0)
        Mean bed thickness per facies.  Thickness = ``min_thickness_m`` + exponential with
        mean ``mean_thickness_m - min_thickness_m``, rounded to whole samples (at least one).
    min_thickness_m : float, default 0.5
    top_depth_m : (float, float), default (2000, 3000)
        The top sample's depth is uniform in this range, rounded to the sample step.
    phi_ref : 3-tuple, default (0.24, 0.19, 0.10)
        Porosity of each facies at ``ref_depth_m``.
    ref_depth_m : float, default 2500
    compaction_per_m : float, default 3e-4
        Athy-type compaction: mean porosity ``phi_ref[f] * exp(-compaction_per_m (z - ref_depth_m))``.
    phi_noise_sd : float, default 0.02
        Standard deviation of the porosity noise, an AR(1) process along depth with
    phi_corr_m : float, default 1.5
        correlation length: correlation ``exp(-step_m / phi_corr_m)`` between adjacent samples.
    phi_clip : (float, float), default (0.01, 0.40)
        Porosity is clipped to this range.
    vsh_mean : 3-tuple, default (0.10, 0.35, 0.75); vsh_noise_sd : float, default 0.08
        Shale volume (v/v) per facies plus independent normal noise, clipped to [0, 1].
    perm_a : 3-tuple, default (-0.5, -2.0, -3.0); perm_b : 3-tuple, default (12.0, 12.0, 10.0)
        The facies porosity-permeability transform ``log10 k = perm_a[f] + perm_b[f] * phi``.
        Sand and shaly sand overlap in porosity but differ by 1.5 decades, so one pooled
        porosity transform cannot fit both.
    cement_decades : float, default 1.5; cement_length_m : float, default 1.0
        The cross-depth term: sand and shaly sand lose ``cement_decades * exp(-d / cement_length_m)``
        decades of permeability, where ``d`` (m) is the distance to the nearest shale sample
        above or below in the same well (carbonate cement near shale contacts).  Shale samples
        and wells without shale are unaffected.  ``d`` depends on neighbouring depths only, so a
        transform of the local porosity cannot reproduce it.
    perm_noise_sd : float, default 0.15
        Independent normal noise on log10 k.
    """

    transition: tuple = ((0.0, 0.6, 0.4), (0.5, 0.0, 0.5), (0.5, 0.5, 0.0))
    initial: tuple = (1 / 3, 1 / 3, 1 / 3)
    mean_thickness_m: tuple = (4.0, 2.0, 3.0)
    min_thickness_m: float = 0.5
    top_depth_m: tuple = (2000.0, 3000.0)
    phi_ref: tuple = (0.24, 0.19, 0.10)
    ref_depth_m: float = 2500.0
    compaction_per_m: float = 3e-4
    phi_noise_sd: float = 0.02
    phi_corr_m: float = 1.5
    phi_clip: tuple = (0.01, 0.40)
    vsh_mean: tuple = (0.10, 0.35, 0.75)
    vsh_noise_sd: float = 0.08
    perm_a: tuple = (-0.5, -2.0, -3.0)
    perm_b: tuple = (12.0, 12.0, 10.0)
    cement_decades: float = 1.5
    cement_length_m: float = 1.0
    perm_noise_sd: float = 0.15


#: Facies codes 0, 1, 2 of the synthetic wells.
FACIES_NAMES = ("sand", "shaly sand", "shale")
_SHALE = FACIES_NAMES.index("shale")


def _facies_column(rng: np.random.Generator, p: SyntheticWellParams, n: int, step_m: float) -> np.ndarray:
    """Facies code per sample for one well: a Markov chain of beds with random thicknesses."""
    max_beds = n  # every bed is at least one sample thick, so n beds always fill the well
    u = rng.random(max_beds)
    e = rng.standard_exponential(max_beds)
    cum_init = np.cumsum(p.initial)
    cum_trans = np.cumsum(np.asarray(p.transition, dtype=float), axis=1)
    beds = np.empty(max_beds, dtype=np.int64)
    f = min(int(np.searchsorted(cum_init, u[0] * cum_init[-1], side="right")), 2)
    beds[0] = f
    for b in range(1, max_beds):  # a Markov chain is sequential by nature; ~70 steps per well
        row = cum_trans[f]
        f = min(int(np.searchsorted(row, u[b] * row[-1], side="right")), 2)
        beds[b] = f
    mean = np.asarray(p.mean_thickness_m)[beds]
    thick_m = p.min_thickness_m + e * (mean - p.min_thickness_m)
    n_samp = np.maximum(1, np.rint(thick_m / step_m)).astype(np.int64)
    return np.repeat(beds, n_samp)[:n]


def _distance_to_shale(facies: np.ndarray, step_m: float) -> np.ndarray:
    """Distance (m) from each sample to the nearest shale sample of its row; inf if none."""
    n = facies.shape[-1]
    idx = np.arange(n)
    big = 10 * n
    is_shale = facies == _SHALE
    above = np.maximum.accumulate(np.where(is_shale, idx, -big), axis=-1)
    below = np.minimum.accumulate(np.where(is_shale, idx, 2 * big)[..., ::-1], axis=-1)[..., ::-1]
    d = np.minimum(idx - above, below - idx).astype(np.float64)
    return np.where(d >= big, np.inf, d * step_m)


_UNITS = {"PHI": "v/v", "VSH": "v/v", "PERM": "mD", "FACIES": ""}
_DESCRIPTIONS = {
    "PHI": "porosity, fraction",
    "VSH": "shale volume, fraction",
    "PERM": "permeability",
    "FACIES": "0 sand, 1 shaly sand, 2 shale",
}


def _porosity(facies: np.ndarray, depth: np.ndarray, w: np.ndarray, step_m: float, p: SyntheticWellParams) -> np.ndarray:
    """Facies level, compaction with depth, AR(1) noise y_t = rho y_{t-1} + sqrt(1-rho^2) w_t."""
    rho = np.exp(-step_m / p.phi_corr_m)
    scale = np.sqrt(1.0 - rho**2)
    ar = np.empty_like(w)  # (n_wells, n)
    ar[:, 0] = w[:, 0]  # stationary start: unit variance from the first sample
    for t in range(1, w.shape[1]):  # a recursion along depth, vectorised over wells
        ar[:, t] = rho * ar[:, t - 1] + scale * w[:, t]
    trend = np.exp(-p.compaction_per_m * (depth - p.ref_depth_m))
    return np.clip(np.asarray(p.phi_ref)[facies] * trend + p.phi_noise_sd * ar, *p.phi_clip)


def _permeability(facies: np.ndarray, phi: np.ndarray, k_noise: np.ndarray, step_m: float,
                  p: SyntheticWellParams) -> np.ndarray:
    """A facies poro-perm transform, less the cementation near shale contacts (in decades), in mD."""
    dist = _distance_to_shale(facies, step_m)
    cement = np.where(facies != _SHALE, p.cement_decades * np.exp(-dist / p.cement_length_m), 0.0)
    log10k = np.asarray(p.perm_a)[facies] + np.asarray(p.perm_b)[facies] * phi - cement + p.perm_noise_sd * k_noise
    return 10.0**log10k


def synthetic_wells(
    n_wells: int = 100,
    n_samples: int = 400,
    step_m: float = 0.5,
    seed: int = 13,
    params: SyntheticWellParams | None = None,
) -> list[WellLog]:
    """Generate layered synthetic wells whose permeability depends on neighbouring depths.

    Each well draws from its own generator, ``default_rng(SeedSequence(seed).spawn(n_wells)[i])``
    (so well i does not depend on ``n_wells``), in this order:

    1. Facies (0 sand, 1 shaly sand, 2 shale): a Markov chain of beds (``params.transition``)
       with exponential thicknesses (``params.mean_thickness_m``), sampled every ``step_m``.
    2. Depth: top uniform in ``params.top_depth_m`` (rounded to ``step_m``), then ``step_m`` apart.
    3. Porosity PHI (v/v) = ``phi_ref[f] * exp(-compaction_per_m (z - ref_depth_m))`` + AR(1)
       noise (sd ``phi_noise_sd``, correlation length ``phi_corr_m``), clipped to ``phi_clip``.
    4. Shale volume VSH (v/v) = ``vsh_mean[f]`` + N(0, ``vsh_noise_sd``), clipped to [0, 1].
    5. Permeability PERM (mD) = 10 ** (``perm_a[f] + perm_b[f] * PHI``
       ``- cement_decades * exp(-d / cement_length_m) * [f != shale]`` + N(0, ``perm_noise_sd``)),
       with ``d`` the distance (m) to the nearest shale sample (the cross-depth dependency).

    See :class:`SyntheticWellParams` for every constant and its default.  The same arguments
    give the same wells on every run.  Train on 80 and test on 20 with
    ``split_by_sequence(n_wells, 0.8, seed)``.

    Parameters
    ----------
    n_wells : int, default 100
    n_samples : int, default 400 (200 m at 0.5 m)
        Samples per well (>= 2).
    step_m : float, default 0.5
        Depth step in metres.
    seed : int, default 13 (the chapter's workflow seed)
    params : SyntheticWellParams, optional

    Returns
    -------
    list of WellLog
        Named ``SYN-001`` ...; depth in m; curves PHI (v/v), VSH (v/v), PERM (mD) and FACIES
        (code 0/1/2, stored as float).

    Raises
    ------
    InputError
        Non-positive ``n_wells``, ``n_samples < 2`` or a non-positive ``step_m``.
    """
    n_wells = check_positive_int(n_wells, "n_wells", "synthetic_wells")
    n = check_positive_int(n_samples, "n_samples", "synthetic_wells", minimum=2)
    if not (np.isfinite(step_m) and step_m > 0):
        raise InputError(f"synthetic_wells: step_m must be a positive number of metres, got {step_m!r}")
    p = params or SyntheticWellParams()
    # One generator per well, spawned from the seed: well i is the same whatever n_wells is.
    facies, tops, w, vsh_noise, k_noise = [], [], [], [], []
    for child in np.random.SeedSequence(seed).spawn(n_wells):
        rng = np.random.default_rng(child)
        facies.append(_facies_column(rng, p, n, step_m))
        tops.append(rng.uniform(*p.top_depth_m))
        w.append(rng.standard_normal(n))
        vsh_noise.append(rng.standard_normal(n))
        k_noise.append(rng.standard_normal(n))
    facies, w, vsh_noise, k_noise = (np.stack(a) for a in (facies, w, vsh_noise, k_noise))  # (n_wells, n)
    depth = (np.rint(np.asarray(tops) / step_m) * step_m)[:, None] + step_m * np.arange(n)

    phi = _porosity(facies, depth, w, step_m, p)
    vsh = np.clip(np.asarray(p.vsh_mean)[facies] + p.vsh_noise_sd * vsh_noise, 0.0, 1.0)
    perm = _permeability(facies, phi, k_noise, step_m, p)

    curves = {"PHI": phi, "VSH": vsh, "PERM": perm, "FACIES": facies.astype(np.float64)}
    return [
        WellLog(name=f"SYN-{i + 1:03d}", source=f"synthetic_wells(seed={seed}): well {i + 1} of {n_wells}",
                depth=depth[i], depth_unit="m", curves={k: v[i] for k, v in curves.items()},
                units=_UNITS, descriptions=_DESCRIPTIONS)
        for i in range(n_wells)
    ]
