"""Training checkpoints: ``checkpoint.npz`` + ``checkpoint.json``, the machinery of model files.

Arrays anywhere inside the model, optimizer and trainer states are stored in the npz under
``model/…``, ``optim/…``, ``trainer/…``; everything else is JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, ModelFileError
from .archive import ARRAY_KINDS, check_config, make_meta, read_pair, write_pair

__all__ = ["CHECKPOINT_FORMAT", "Checkpoint", "load_checkpoint", "save_checkpoint"]

CHECKPOINT_FORMAT = "glassformer-checkpoint"


def _split_arrays(obj, prefix: str, arrays: dict, where: str):
    """Replace every ndarray inside ``obj`` by ``{"__array__": key}``, collecting it in ``arrays``."""
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in ARRAY_KINDS:
            raise InputError(f"{where}: {prefix} has dtype {obj.dtype}; only numeric arrays can be saved")
        arrays[prefix] = obj
        return {"__array__": prefix}
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                raise InputError(f"{where}: key {k!r} under {prefix!r} must be a string")
            out[k] = _split_arrays(v, f"{prefix}/{k}", arrays, where)
        return out
    if isinstance(obj, (list, tuple)):
        return [_split_arrays(v, f"{prefix}/{i}", arrays, where) for i, v in enumerate(obj)]
    return obj


def _join_arrays(obj, arrays: dict, where: Path):
    if isinstance(obj, dict):
        if set(obj) == {"__array__"}:
            key = obj["__array__"]
            if key not in arrays:
                raise ModelFileError(f"{where}: refers to array {key!r}, which is not in the archive")
            return arrays[key]
        return {k: _join_arrays(v, arrays, where) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_join_arrays(v, arrays, where) for v in obj]
    return obj


@dataclass
class Checkpoint:
    """A training checkpoint as read by :func:`load_checkpoint` (the arguments of :func:`save_checkpoint`)."""

    model_state: dict
    optimizer_state: dict
    trainer_state: dict
    config: Any


def save_checkpoint(path, *, model_state: dict, optimizer_state: dict, trainer_state: dict,
                    config: dict, overwrite: bool = True) -> Path:
    """Save everything needed to resume training as ``checkpoint.npz`` + ``checkpoint.json``.

    Parameters
    ----------
    path : str or Path
        A folder (created if missing), or a file name ending in ``.npz``/``.json``.
    model_state : dict[str, ndarray]
        ``model.state_dict()``.
    optimizer_state : dict
        ``optimizer.state_dict()`` (its ``arrays`` go into the npz).
    trainer_state : dict
        JSON-able training state, e.g. ``{"epoch": 3, "rng": rng.bit_generator.state,
        "history": {...}}``; ndarrays anywhere inside are stored in the npz.
    config : dict
        The run's configuration (JSON-serialisable).
    overwrite : bool, default True
        Periodic checkpoints replace the previous one; pass False to refuse.

    Returns
    -------
    Path
        The ``.npz`` file written.

    Raises
    ------
    InputError
        If something is not serialisable (non-string keys, object arrays, other objects).
    """
    where = "save_checkpoint"
    arrays: dict[str, np.ndarray] = {}
    payload = {
        "model": _split_arrays(dict(model_state), "model", arrays, where),
        "optim": _split_arrays(dict(optimizer_state), "optim", arrays, where),
        "trainer": _split_arrays(dict(trainer_state), "trainer", arrays, where),
    }
    payload = check_config(payload, where)
    config = check_config(config, where)
    meta = make_meta(CHECKPOINT_FORMAT, "checkpoint", config, arrays, state=payload)
    p = Path(path)
    if p.suffix in (".npz", ".json"):
        npz_path, json_path = p.with_suffix(".npz"), p.with_suffix(".json")
    else:
        p.mkdir(parents=True, exist_ok=True)
        npz_path, json_path = p / "checkpoint.npz", p / "checkpoint.json"
    write_pair(npz_path, json_path, arrays, meta, overwrite, where)
    return npz_path


def load_checkpoint(path) -> Checkpoint:
    """Read and verify a checkpoint written by :func:`save_checkpoint`.

    Raises
    ------
    ModelFileError
        As :func:`load_model_file`, for ``checkpoint.npz``/``checkpoint.json``.
    """
    p = Path(path)
    if p.suffix in (".npz", ".json"):
        npz_path, json_path = p.with_suffix(".npz"), p.with_suffix(".json")
    else:
        npz_path, json_path = p / "checkpoint.npz", p / "checkpoint.json"
    if not npz_path.exists() and not json_path.exists():
        raise ModelFileError(f"{path}: no checkpoint found (expected {npz_path.name} and {json_path.name})")
    meta, arrays = read_pair(npz_path, json_path, CHECKPOINT_FORMAT)
    state = meta.get("state")
    if not isinstance(state, dict) or not all(isinstance(state.get(k), dict) for k in ("model", "optim", "trainer")):
        raise ModelFileError(f"{json_path}: missing or malformed 'state' section")
    full = _join_arrays(state, arrays, json_path)
    return Checkpoint(full["model"], full["optim"], full["trainer"], meta.get("config"))
