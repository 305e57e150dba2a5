"""Safe files: atomic writes, model files and training checkpoints.

Atomic writes
    Every file is written to a temporary file in the *same* folder, flushed and ``fsync``-ed,
    then moved over the target with ``os.replace`` (atomic on POSIX and Windows).  If anything
    fails on the way, the temporary file is removed and the previous file is untouched
    (../shared/DESIGN.md, fixed decision 10).

Model files
    A model is two files side by side, ``model.npz`` (arrays only) and ``model.json``::

        {"format": "glassformer-model", "format_version": 1, "kind": "...", "config": {...},
         "arrays": {"name": {"shape": [...], "dtype": "<f8"}, ...},
         "glassformer_version": "...",
         "checksum": {"algorithm": "sha256", "arrays": "<hex>", "meta": "<hex>"}}

    The ``arrays`` checksum is SHA-256 over, for each array in sorted name order, its name,
    dtype, shape and C-order bytes; the ``meta`` checksum covers the canonical JSON of every
    other field (so an edited config is detected too).  Loading never unpickles (``np.load(..., allow_pickle=False)``,
    and the file's magic bytes are checked first) and rejects truncated, corrupted, foreign,
    pickled and wrong-version files with :class:`~glassformer.errors.ModelFileError`.

Checkpoints
    ``checkpoint.npz`` + ``checkpoint.json`` (format ``"glassformer-checkpoint"``) with the same
    machinery; arrays anywhere inside the model, optimizer and trainer states are stored in the
    npz under ``model/…``, ``optim/…``, ``trainer/…`` and everything else as JSON.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError, ModelFileError

__all__ = [
    "Checkpoint", "LoadedModel", "MODEL_FORMAT", "CHECKPOINT_FORMAT", "FORMAT_VERSION",
    "atomic_open", "atomic_write_bytes", "atomic_write_json", "atomic_write_text",
    "load_checkpoint", "load_model", "load_model_file", "save_checkpoint", "save_model",
]

MODEL_FORMAT = "glassformer-model"
CHECKPOINT_FORMAT = "glassformer-checkpoint"
FORMAT_VERSION = 1
_EXTRA = "extra/"
_ARRAY_KINDS = "fiub"  # float, signed/unsigned int, bool: never object, string or structured
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed timestamp: identical arrays give identical files


# =========================================================================== atomic writes
def _file_mode(path: Path) -> int:
    """Permission bits for the new file: the old file's, else 0o666 minus the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        pass
    try:  # Linux: read the umask without changing it (os.umask would, process-wide)
        with open("/proc/self/status", encoding="ascii") as fh:
            umask = next(int(line.split()[1], 8) for line in fh if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        umask = os.umask(0o022)
        os.umask(umask)
    return 0o666 & ~umask


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_open(path, mode: str = "w", *, encoding: str = "utf-8", newline: str | None = None):
    """Open a temporary file that replaces ``path`` only when the ``with`` block succeeds.

    Parameters
    ----------
    path : str or Path
        Final file name; its folder must exist.
    mode : {"w", "wt", "wb"}
        Text or binary writing.
    encoding, newline
        For text mode, as in :func:`open` (UTF-8 by default).

    Raises
    ------
    InputError
        For a mode other than writing.
    FileNotFoundError
        If the folder of ``path`` does not exist.

    Notes
    -----
    On any exception (including ``KeyboardInterrupt``) inside the block, the temporary file is
    deleted, ``path`` keeps its previous content, and the exception propagates.
    """
    if mode not in ("w", "wt", "wb"):
        raise InputError(f"atomic_open: mode must be 'w', 'wt' or 'wb', got {mode!r}")
    path = Path(path)
    folder = path.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"cannot write {path}: folder {folder} does not exist")
    perm = _file_mode(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        kwargs = {} if "b" in mode else {"encoding": encoding, "newline": newline}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, perm)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)


def atomic_write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_open`)."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)


def atomic_write_text(path, text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically, UTF-8 by default, line endings unchanged."""
    with atomic_open(path, "w", encoding=encoding, newline="") as fh:
        fh.write(text)


def _json_default(obj):
    """Let numpy scalars through ``json.dumps``; anything else is an error naming its type."""
    if isinstance(obj, np.generic) and obj.dtype.kind in "fiub":
        return obj.item()
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serialisable")


def _dumps(obj, *, indent=2) -> str:
    return json.dumps(obj, indent=indent, sort_keys=False, default=_json_default, ensure_ascii=False)


def atomic_write_json(path, obj, *, indent: int = 2) -> None:
    """Serialise ``obj`` (numpy scalars allowed) and write it to ``path`` atomically.

    Raises
    ------
    InputError
        If ``obj`` is not JSON-serialisable (nothing is written then).
    """
    try:
        text = _dumps(obj, indent=indent)
    except (TypeError, ValueError) as exc:
        raise InputError(f"atomic_write_json: cannot write {path}: {exc}") from None
    atomic_write_text(path, text + "\n")


# =========================================================================== npz + json pairs
def _write_npz(fh, arrays: dict[str, np.ndarray]) -> None:
    """Write an uncompressed ``.npz`` (the layout ``np.savez`` produces) without ever pickling."""
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, arr in arrays.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=_ZIP_TIME)
            with zf.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.ascontiguousarray(arr), allow_pickle=False)


def _array_digest(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}\0{a.dtype.str}\0{list(a.shape)}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _meta_digest(meta: dict) -> str:
    """SHA-256 of the canonical JSON of everything in ``meta`` except the checksum itself."""
    body = {k: v for k, v in meta.items() if k != "checksum"}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), default=_json_default, ensure_ascii=True)
    return hashlib.sha256(canon.encode()).hexdigest()


def _check_arrays(arrays: dict, what: str, where: str) -> dict[str, np.ndarray]:
    out = {}
    for name, a in arrays.items():
        if not isinstance(name, str) or not name:
            raise InputError(f"{where}: {what} keys must be non-empty strings, got {name!r}")
        a = np.asarray(a)
        if a.dtype.kind not in _ARRAY_KINDS:
            raise InputError(f"{where}: {what}[{name!r}] has dtype {a.dtype}; only numeric and boolean arrays "
                             "can be saved (never objects: model files are not pickles)")
        out[name] = a
    return out


def _write_pair(npz_path: Path, json_path: Path, arrays: dict, meta: dict, overwrite: bool, where: str) -> None:
    """Write both files of a pair; each replaces its target atomically.

    The npz temporary is complete and synced before the JSON is written, and the JSON is renamed
    before the npz, so an interruption can at worst leave a new JSON beside the old npz, which the
    checksum then reports on load; a failure while writing leaves both old files untouched.
    """
    if not overwrite:
        for p in (npz_path, json_path):
            if p.exists():
                raise ModelFileError(f"{where}: {p} already exists; pass overwrite=True "
                                     "(on the command line: --overwrite) to replace it")
    try:
        text = _dumps(meta) + "\n"
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: the config is not JSON-serialisable ({exc})") from None
    with atomic_open(npz_path, "wb") as fnpz:
        _write_npz(fnpz, arrays)
        with atomic_open(json_path, "w", newline="") as fjson:
            fjson.write(text)


# --- reading -----------------------------------------------------------------
_MAGIC_HINTS = (
    (b"\x89PNG", "a PNG image"),
    (b"%PDF", "a PDF document"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"\x93NUMPY", "a single .npy array, not an .npz archive"),
    (b"\x80", "a Python pickle (glassformer never unpickles files)"),
)


def _check_npz_magic(path: Path) -> None:
    """Reject anything that is not a zip archive by its first bytes, before NumPy sees it."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return
    if not head:
        raise ModelFileError(f"{path}: the file is empty (truncated or never written)")
    for magic, what in _MAGIC_HINTS:
        if head.startswith(magic):
            raise ModelFileError(f"{path}: not a NumPy .npz archive; it looks like {what}")
    try:
        head.decode("ascii")
        guess = "a text file (CSV, JSON, LAS, ...) renamed to .npz"
    except UnicodeDecodeError:
        guess = "an unknown binary format"
    raise ModelFileError(f"{path}: not a NumPy .npz archive (starts with {head[:8]!r}); it looks like {guess}")


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    _check_npz_magic(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            if not isinstance(npz, np.lib.npyio.NpzFile):
                raise ModelFileError(f"{path}: not a NumPy .npz archive")
            return {name: npz[name] for name in npz.files}
    except ModelFileError:
        raise
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise ModelFileError(f"{path}: contains object arrays that would need unpickling; glassformer "
                                 "never unpickles files (refused)") from None
        raise ModelFileError(f"{path}: corrupted array data ({exc})") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, KeyError, NotImplementedError) as exc:
        raise ModelFileError(f"{path}: truncated or corrupted archive ({type(exc).__name__}: {exc})") from None


def _read_meta(path: Path, fmt: str) -> dict:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        meta = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ModelFileError(f"{path}: not a {fmt} file (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise ModelFileError(f"{path}: not valid JSON (truncated or corrupted?): {exc}") from None
    if not isinstance(meta, dict) or "format" not in meta:
        raise ModelFileError(f"{path}: not a {fmt} file (no 'format' field; a JSON file from elsewhere?)")
    if meta["format"] != fmt:
        raise ModelFileError(f"{path}: foreign file: format is {meta['format']!r}, expected {fmt!r}")
    version = meta.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ModelFileError(f"{path}: invalid format_version {version!r}")
    if version > FORMAT_VERSION:
        raise ModelFileError(f"{path}: format_version {version} is newer than this glassformer reads "
                             f"(version {FORMAT_VERSION}); upgrade glassformer")
    for key in ("arrays", "checksum"):
        if not isinstance(meta.get(key), dict):
            raise ModelFileError(f"{path}: missing or malformed '{key}' section")
    return meta


def _read_pair(npz_path: Path, json_path: Path, fmt: str) -> tuple[dict, dict[str, np.ndarray]]:
    """Read and verify a pair; every failure is a :class:`ModelFileError` naming the file."""
    if not npz_path.is_file():
        raise ModelFileError(f"{npz_path}: missing (expected beside {json_path.name})")
    _check_npz_magic(npz_path)  # the most specific complaint about a disguised file comes first
    if not json_path.is_file():
        raise ModelFileError(f"{json_path}: missing (every {npz_path.name} needs its {json_path.name})")
    meta = _read_meta(json_path, fmt)
    arrays = _read_npz(npz_path)
    listed = meta["arrays"]
    missing = sorted(set(listed) - set(arrays))
    unexpected = sorted(set(arrays) - set(listed))
    if missing or unexpected:
        raise ModelFileError(f"{npz_path}: arrays do not match {json_path.name} (missing {missing[:5]}, "
                             f"unexpected {unexpected[:5]}); the two files do not belong together")
    for name, a in arrays.items():
        if a.dtype.kind not in _ARRAY_KINDS:
            raise ModelFileError(f"{npz_path}: array {name!r} has unsupported dtype {a.dtype}")
        spec = listed[name]
        if not isinstance(spec, dict) or list(a.shape) != spec.get("shape") or a.dtype.str != spec.get("dtype"):
            raise ModelFileError(f"{npz_path}: array {name!r} is {a.dtype.str}{list(a.shape)}, "
                                 f"{json_path.name} says {spec!r}")
    checksum = meta["checksum"]
    if checksum.get("algorithm") != "sha256":
        raise ModelFileError(f"{json_path}: unsupported checksum algorithm {checksum.get('algorithm')!r}")
    if _array_digest(arrays) != checksum.get("arrays"):
        raise ModelFileError(f"{npz_path}: checksum mismatch: the arrays are not the ones saved with "
                             f"{json_path.name} (corrupted, modified, or from another save)")
    if _meta_digest(meta) != checksum.get("meta"):
        raise ModelFileError(f"{json_path}: checksum mismatch: its content (kind, config, state) was "
                             "modified or corrupted after saving")
    return meta, arrays


def _meta(fmt: str, kind: str, config, arrays: dict, **more) -> dict:
    """The JSON half of a pair; ``more`` holds extra JSON sections (a checkpoint's ``state``)."""
    from . import __version__

    meta = {
        "format": fmt,
        "format_version": FORMAT_VERSION,
        "kind": kind,
        "config": config,
        "arrays": {n: {"shape": list(a.shape), "dtype": a.dtype.str} for n, a in arrays.items()},
        "glassformer_version": __version__,
        **more,
    }
    meta["checksum"] = {"algorithm": "sha256", "arrays": _array_digest(arrays), "meta": _meta_digest(meta)}
    return meta


def _check_config(config, where: str) -> None:
    try:
        text = json.dumps(config, default=_json_default, allow_nan=True)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: config must be JSON-serialisable ({exc})") from None
    # Round-trip through JSON so the saved config checksums exactly as it will be read back.
    return json.loads(text)


# =========================================================================== model files
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
    arrays = _check_arrays(state, "state", where)
    clash = [n for n in arrays if n.startswith(_EXTRA)]
    if clash:
        raise InputError(f"{where}: state keys must not start with {_EXTRA!r}: {clash}")
    for n, a in _check_arrays(dict(extra_arrays or {}), "extra_arrays", where).items():
        arrays[_EXTRA + n] = a
    config = _check_config(config, where)
    npz_path, json_path = _model_paths(path)
    if Path(path).suffix not in (".npz", ".json"):
        Path(path).mkdir(parents=True, exist_ok=True)
    _write_pair(npz_path, json_path, arrays, _meta(MODEL_FORMAT, kind, config, arrays), overwrite, where)
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
    meta, arrays = _read_pair(npz_path, json_path, MODEL_FORMAT)
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


# =========================================================================== checkpoints
def _split_arrays(obj, prefix: str, arrays: dict, where: str):
    """Replace every ndarray inside ``obj`` by ``{"__array__": key}``, collecting it in ``arrays``."""
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in _ARRAY_KINDS:
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
    payload = _check_config(payload, where)
    config = _check_config(config, where)
    meta = _meta(CHECKPOINT_FORMAT, "checkpoint", config, arrays, state=payload)
    p = Path(path)
    if p.suffix in (".npz", ".json"):
        npz_path, json_path = p.with_suffix(".npz"), p.with_suffix(".json")
    else:
        p.mkdir(parents=True, exist_ok=True)
        npz_path, json_path = p / "checkpoint.npz", p / "checkpoint.json"
    _write_pair(npz_path, json_path, arrays, meta, overwrite, where)
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
    meta, arrays = _read_pair(npz_path, json_path, CHECKPOINT_FORMAT)
    state = meta.get("state")
    if not isinstance(state, dict) or not all(isinstance(state.get(k), dict) for k in ("model", "optim", "trainer")):
        raise ModelFileError(f"{json_path}: missing or malformed 'state' section")
    full = _join_arrays(state, arrays, json_path)
    return Checkpoint(full["model"], full["optim"], full["trainer"], meta.get("config"))
