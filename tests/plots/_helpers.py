"""Shared by the plot tests: the depths and intervals of the chapter's demonstration 1, and checks on axes."""

from __future__ import annotations

import numpy as np

DEPTH = np.arange(1.0, 15.0)
INTERVALS = {"train": (1, 7.5), "forecast": (7.5, 14)}


def rng():
    return np.random.default_rng(0)


def softmax_rows(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def inverted(ax):
    """True when depth increases downwards on ``ax``."""
    lo, hi = ax.get_ylim()
    return lo > hi
