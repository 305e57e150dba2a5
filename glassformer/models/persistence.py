"""Saving and rebuilding models whose constructor arguments are their ``config`` dict.

Used by :class:`~glassformer.models.Seq2SeqTransformer` and :class:`~glassformer.models.DecoderOnlyLM`:
the arrays go to ``model.npz`` and ``{"model": config, "extra": ...}`` to ``model.json`` through
:func:`glassformer.io.save_model` (atomic, checksummed, never pickled).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import io
from ..errors import ModelFileError


def save_configured(model, directory, kind: str, *, overwrite: bool = False, extra: dict | None = None) -> Path:
    """Write ``model``'s ``state_dict()`` and ``config`` into ``directory``; returns the npz path.

    Raises
    ------
    ModelFileError if the model files exist and ``overwrite`` is False.
    """
    config = {"model": model.config, "extra": extra or {}}
    return io.save_model(Path(directory), dict(model.state_dict()), config, kind=kind, overwrite=overwrite)


def load_configured(cls, directory, kind: str):
    """Rebuild ``cls(**config)`` from ``directory`` and load its arrays.

    Raises
    ------
    ModelFileError for missing, corrupted or foreign files, or a model of another kind.
    """
    state, config, found = io.load_model(directory)
    if found != kind or not isinstance(config, dict) or "model" not in config:
        raise ModelFileError(f"{directory}: holds a {found!r}, not a {kind}")
    cfg = dict(config["model"])
    dtype = cfg.pop("dtype", "float64")
    model = cls(**cfg, rng=0, dtype=np.dtype(dtype))
    model.load_state_dict(state)
    return model
