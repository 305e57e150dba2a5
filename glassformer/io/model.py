"""Model files: ``model.npz`` + ``model.json``, atomic, checksummed, never pickled.

The JSON half holds the model's kind, its config and the checksums (see
:mod:`glassformer.io.archive` for the layout); the npz half holds the parameters by PyTorch-style
qualified name, plus any extra arrays (scalers, ...) under ``extra/<name>``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, ModelFileError
from .archive import check_arrays, check_config, make_meta, read_pair, write_pair

__all__ = ["MODEL_FORMAT", "LoadedModel", "load_model", "load_model_file", "save_model", "saved_checksum"]

MODEL_FORMAT = "glassformer-model"
_EXTRA = "extra/"


def _model_paths(path) -> tuple[Path, Path]:
    """``dir`` -> dir/model.npz + dir/model.json; ``x.npz`` or ``x.json`` -> x.npz + x.json."""
    path = Path(path)
    if path.suffix in (".npz", ".json"):
        return path.with_suffix(".npz"), path.with_suffix(".json")
    return path / "model.npz", path / "model.json"


@dataclass
class LoadedModel:
    """Everything in a model file.

    Attributes
    ----------
    state : dict[str, ndarray]
        Parameters by PyTorch-style qualified name (for ``load_state_dict``).
    config : dict
        The JSON config saved with the model.
    kind : str
        The model class name given to :func:`save_model`.
    extra_arrays : dict[str, ndarray]
        Non-parameter arrays saved with the model (scalers, vocabularies as ids, ...).
    format_version : int
    path : Path
        The ``.npz`` file read.
    """

    state: dict
    config: Any
    kind: str
    extra_arrays: dict
    format_version: int
    path: Path


def save_model(path, state: dict, config: dict, *, kind: str, extra_arrays: dict | None = None,
               overwrite: bool = False) -> Path:
    """Save a model's parameters and config as ``model.npz`` + ``model.json``, atomically.

    Parameters
    ----------
    path : str or Path
        A folder (created if missing) that receives ``model.npz`` and ``model.json``, or a file name
        ending in ``.npz``/``.json`` whose stem names the pair.
    state : dict[str, ndarray]
        ``module.state_dict()``; numeric or boolean arrays only.
    config : dict
        JSON-serialisable hyperparameters needed to rebuild the model (numpy scalars allowed; tuples
        come back as lists).
    kind : str
        What the model is (e.g. ``"SequenceRegressor"``), returned by :func:`load_model`.
    extra_arrays : dict[str, ndarray], optional
        Other arrays to keep with the model; stored under ``extra/<name>``.
    overwrite : bool, default False
        Replace an existing model; otherwise refuse.

    Returns
    -------
    Path
        The ``.npz`` file written.

    Raises
    ------
    ModelFileError
        If the files exist and ``overwrite`` is False.
    InputError
        If ``kind`` is empty, a key is not a string, an array is not numeric, or ``config`` is not
        JSON-serialisable.
    """
    where = "save_model"
    if not isinstance(kind, str) or not kind:
        raise InputError(f"{where}: kind must be a non-empty string, got {kind!r}")
    if not isinstance(state, dict) or not state:
        raise InputError(f"{where}: state must be a non-empty dict of arrays, got {type(state).__name__}")
    arrays = check_arrays(state, "state", where)
    clash = [n for n in arrays if n.startswith(_EXTRA)]
    if clash:
        raise InputError(f"{where}: state keys must not start with {_EXTRA!r}: {clash}")
    for n, a in check_arrays(dict(extra_arrays or {}), "extra_arrays", where).items():
        arrays[_EXTRA + n] = a
    config = check_config(config, where)
    npz_path, json_path = _model_paths(path)
    if Path(path).suffix not in (".npz", ".json"):
        Path(path).mkdir(parents=True, exist_ok=True)
    write_pair(npz_path, json_path, arrays, make_meta(MODEL_FORMAT, kind, config, arrays), overwrite, where)
    return npz_path


def load_model_file(path) -> LoadedModel:
    """Read and verify a model saved by :func:`save_model` (see :class:`LoadedModel`).

    Parameters
    ----------
    path : str or Path
        The folder, or either file of the pair.

    Raises
    ------
    ModelFileError
        With the file name and the problem: a missing file, a truncated or corrupted archive, a
        checksum mismatch, a foreign file (another format renamed, a JSON from elsewhere), an
        unsupported ``format_version``, or pickled content (never unpickled).
    """
    npz_path, json_path = _model_paths(path)
    if not npz_path.exists() and not json_path.exists():
        raise ModelFileError(f"{path}: no model found (expected {npz_path.name} and {json_path.name})")
    meta, arrays = read_pair(npz_path, json_path, MODEL_FORMAT)
    kind = meta.get("kind")
    if not isinstance(kind, str):
        raise ModelFileError(f"{json_path}: missing or malformed 'kind'")
    state = {n: a for n, a in arrays.items() if not n.startswith(_EXTRA)}
    extra = {n[len(_EXTRA):]: a for n, a in arrays.items() if n.startswith(_EXTRA)}
    return LoadedModel(state, meta.get("config"), kind, extra, meta["format_version"], npz_path)


def load_model(path) -> tuple[dict, Any, str]:
    """Return ``(state, config, kind)`` of a model file; see :func:`load_model_file` (errors too)."""
    m = load_model_file(path)
    return m.state, m.config, m.kind


def saved_checksum(path) -> dict:
    """The checksum :func:`save_model` stored in the ``model.json`` of ``path`` (a folder, or either file of
    the pair): ``{"algorithm", "arrays", "meta"}``, read without loading the arrays.

    Raises
    ------
    ModelFileError
        No readable ``model.json`` there, or one without a checksum.
    """
    json_path = _model_paths(path)[1]
    try:
        return json.loads(json_path.read_text(encoding="utf-8"))["checksum"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelFileError(f"{json_path}: no readable checksum ({type(exc).__name__}: {exc})") from None
