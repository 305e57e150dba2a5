"""A well put onto another depth step and back: linear interpolation that never bridges a gap.

A model's window is ``T`` samples; on a well sampled every 0.1524 m instead of the training
wells' 0.1 m those ``T`` samples span half as much rock again.  ``glassformer predict --resample``
therefore puts the well onto the model's step (:func:`resample_log`), predicts there, and puts
the predictions back onto the file's own depths (:func:`interpolate_onto`), so the output keeps
the file's depths.

Both use linear interpolation between the two neighbouring samples (numpy.interp).  A value is
missing (NaN) where either neighbour is missing: a gap is never filled by interpolating across it,
and nothing is extrapolated beyond the first or last depth.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError

__all__ = ["interpolate_onto", "regular_depths", "resample_log"]


def regular_depths(top: float, base: float, step: float) -> np.ndarray:
    """``top, top + step, ...`` up to ``base`` (inclusive within round-off), shape ``(n,)``.

    Raises
    ------
    InputError
        ``step`` not a finite number > 0.
    """
    if not (np.isfinite(step) and step > 0):
        raise InputError(f"resampling needs a step > 0, got {step!r}")
    n = int(np.floor((base - top) / step + 1e-9)) + 1
    return top + step * np.arange(n)                                  # (n,)


def interpolate_onto(depth, values, new_depth) -> np.ndarray:
    """``values`` sampled at ``depth`` (increasing), linearly interpolated at ``new_depth``.

    Parameters
    ----------
    depth : array (n,), strictly increasing
    values : array (n,), NaN where missing
    new_depth : array (m,)

    Returns
    -------
    ndarray (m,)
        NaN outside ``[depth[0], depth[-1]]`` and wherever a neighbouring sample is NaN.
    """
    depth, values, new_depth = (np.asarray(a, dtype=np.float64) for a in (depth, values, new_depth))
    ok = np.isfinite(values)
    filled = np.interp(new_depth, depth, np.where(ok, values, 0.0))   # (m,)
    # the share of valid neighbours: exactly 1 only where both neighbours (or an exact sample) are valid
    valid = np.interp(new_depth, depth, ok.astype(np.float64))        # (m,)
    inside = (new_depth >= depth[0]) & (new_depth <= depth[-1])
    return np.where((valid > 1.0 - 1e-9) & inside, filled, np.nan)


def resample_log(log, step: float):
    """``log`` on a regular grid of ``step`` (its depth unit) from its first depth to its last.

    Every curve is interpolated (:func:`interpolate_onto`); the name, units and source stay.  The
    grid ends on the file's last depth (a shorter last step when the span is not a whole number of
    steps), so that the last samples of the file are predicted too.
    """
    top, base = float(log.depth[0]), float(log.depth[-1])
    grid = regular_depths(top, base, float(step))                       # (n,)
    if base - grid[-1] > 1e-6 * float(step):                            # the span is not a whole number of steps
        grid = np.append(grid, base)                                    # (n + 1,)
    curves = {k: interpolate_onto(log.depth, v, grid) for k, v in log.curves.items()}
    return log._copy(depth=grid, curves=curves)
