"""The npz + JSON pair behind model and checkpoint files.

A pair is ``name.npz`` (arrays only, never pickled) beside ``name.json``::

    {"format": "...", "format_version": 1, "kind": "...", "config": {...},
     "arrays": {"name": {"shape": [...], "dtype": "<f8"}, ...},
     "glassformer_version": "...",
     "checksum": {"algorithm": "sha256", "arrays": "<hex>", "meta": "<hex>"}}

The ``arrays`` checksum is SHA-256 over, for each array in sorted name order, its name, dtype,
shape and C-order bytes; the ``meta`` checksum covers the canonical JSON of every other field (so
an edited config is detected too).  Reading never unpickles (``np.load(..., allow_pickle=False)``,
and the file's magic bytes are checked first) and rejects truncated, corrupted, foreign, pickled
and wrong-version files with :class:`~glassformer.errors.ModelFileError`.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
import zlib
from pathlib import Path

import numpy as np

from .._version import __version__
from ..errors import InputError, ModelFileError
from .atomic import atomic_open, json_default, to_json

__all__ = ["ARRAY_KINDS", "FORMAT_VERSION", "check_arrays", "check_config", "make_meta", "read_pair", "write_pair"]

FORMAT_VERSION = 1
ARRAY_KINDS = "fiub"  # float, signed/unsigned int, bool: never object, string or structured
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed timestamp: identical arrays give identical files


def _write_npz(fh, arrays: dict[str, np.ndarray]) -> None:
    """Write an uncompressed ``.npz`` (the layout ``np.savez`` produces) without ever pickling."""
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, arr in arrays.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=_ZIP_TIME)
            with zf.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.ascontiguousarray(arr), allow_pickle=False)


def _array_digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over each array's name, dtype, shape and C-order bytes, in sorted name order."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}\0{a.dtype.str}\0{list(a.shape)}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _meta_digest(meta: dict) -> str:
    """SHA-256 of the canonical JSON of everything in ``meta`` except the checksum itself."""
    body = {k: v for k, v in meta.items() if k != "checksum"}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), default=json_default, ensure_ascii=True)
    return hashlib.sha256(canon.encode()).hexdigest()


def check_arrays(arrays: dict, what: str, where: str) -> dict[str, np.ndarray]:
    """Return ``arrays`` as ndarrays; raise InputError for a non-string key or a non-numeric array."""
    out = {}
    for name, a in arrays.items():
        if not isinstance(name, str) or not name:
            raise InputError(f"{where}: {what} keys must be non-empty strings, got {name!r}")
        a = np.asarray(a)
        if a.dtype.kind not in ARRAY_KINDS:
            raise InputError(f"{where}: {what}[{name!r}] has dtype {a.dtype}; only numeric and boolean arrays "
                             "can be saved (never objects: model files are not pickles)")
        out[name] = a
    return out


def write_pair(npz_path: Path, json_path: Path, arrays: dict, meta: dict, overwrite: bool, where: str) -> None:
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
        text = to_json(meta) + "\n"
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: the config is not JSON-serialisable ({exc})") from None
    with atomic_open(npz_path, "wb") as fnpz:
        _write_npz(fnpz, arrays)
        with atomic_open(json_path, "w", newline="") as fjson:
            fjson.write(text)


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
    """Every array of an npz archive, read with ``allow_pickle=False``."""
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
    """The JSON half, checked for format, version and the sections every pair has."""
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


def read_pair(npz_path: Path, json_path: Path, fmt: str) -> tuple[dict, dict[str, np.ndarray]]:
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
        if a.dtype.kind not in ARRAY_KINDS:
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


def make_meta(fmt: str, kind: str, config, arrays: dict, **more) -> dict:
    """The JSON half of a pair; ``more`` holds extra JSON sections (a checkpoint's ``state``)."""
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


def check_config(config, where: str):
    """Return ``config`` as it will read back from JSON; raise InputError if it cannot be written."""
    try:
        text = json.dumps(config, default=json_default, allow_nan=True)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: config must be JSON-serialisable ({exc})") from None
    # Round-trip through JSON so the saved config checksums exactly as it will be read back.
    return json.loads(text)

