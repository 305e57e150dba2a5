"""Several wells, each with its own role and interval: from command-line options or a manifest file.

A *well entry* is a file, a role (``train``, ``val`` -- early stopping of the networks -- or
``test``) and an interval ``top:base`` in the file's depth unit.  Without an interval a well
contributes its whole valid log: from the first to the last depth where every input and the
target are present (gaps inside stay gaps: windows never cross them).  Intervals can be given

* on the command line: ``--train-depth 3351.6:4300`` applies to every training well,
  ``--train-depth F11B=3351.6:4300`` to the well whose name or file name matches ``F11B``
  (exactly, else as a unique part of it, ignoring case, spaces and punctuation); likewise
  ``--test-depth`` and ``--val-depth``.  A ``--test-depth`` of a training well is a forecast
  below (or above) its training interval: the two may share only their boundary sample, which
  stays in training;
* in a manifest, a CSV file with the columns ``file, well, role, top, base`` (``well``, ``top``
  and ``base`` may be blank; relative file names are relative to the manifest)::

      file,well,role,top,base
      15_9-F11B_WLC_PETRO_COMPUTED_OUTPUT_1.LAS,F-11 B,train,3351.6,4300
      15_9-F11B_WLC_PETRO_COMPUTED_OUTPUT_1.LAS,F-11 B,test,4300,4744.8
      15_9-F-1B_WLC_PETRO_COMPUTED_OUTPUT_1.LAS,F-1 B,val,,
      15_9-F-1A_WLC_PETRO_COMPUTED_OUTPUT_1.LAS,F-1 A,test,,

Each file is read once; curve aliases (``PHIF=PHIE``) are resolved per well and the curves used
are recorded.  Every well is named in every table, figure and output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..data import common_depth_unit, curve_name, names_depth, read_wells, state_units, with_requested_names
from ..errors import DataFileError, InputError
from .checks import check_wells
from .splits import _forecast_part, check_training_logs

__all__ = ["ROLES", "WellDataset", "WellEntry", "build_dataset", "match_well", "parse_depth_specs",
           "read_manifest", "valid_interval"]

#: The roles a well can play, in the order they are reported.
ROLES = ("train", "val", "test")


@dataclass(frozen=True)
class WellEntry:
    """One well of a dataset: ``path``, ``role``, optional ``top``/``base`` and display name ``well``."""

    path: str
    role: str = "train"
    top: float | None = None
    base: float | None = None
    well: str | None = None


@dataclass
class WellDataset:
    """Wells cut to their intervals, by role.

    Attributes
    ----------
    train, val, test : list of WellLog
        Logs cut to their intervals (curves renamed to the names asked for).
    curves_used : dict
        Well name -> {asked mnemonic: the file's mnemonic used}.
    boundary : float or None
        The train/forecast depth of a single-well depth split (for figures), else None.
    wells : list of WellLog
        The training wells whole (uncut), in the order given.
    warnings : list of str
        What the checks of the validation and test wells found that does not refuse them (a
        sample step other than the training wells'; :func:`glassformer.wells.checks.check_wells`).
    """

    train: list
    val: list = field(default_factory=list)
    test: list = field(default_factory=list)
    curves_used: dict = field(default_factory=dict)
    boundary: float | None = None
    wells: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    def describe(self) -> dict:
        """The wells and intervals of each role, and the curves used, for config.json."""
        def wells(logs):
            return [{"name": g.name, "source": g.source, "top": float(g.depth[0]), "base": float(g.depth[-1]),
                     "depth_unit": g.depth_unit} for g in logs]

        return {"train_wells": wells(self.train), "validation_wells": wells(self.val),
                "test_wells": wells(self.test), "curves_used": self.curves_used}


# --------------------------------------------------------------------------- parsing
def _interval(text: str, option: str) -> tuple:
    try:
        a, b = (float(v) for v in str(text).split(":"))
    except ValueError:
        raise InputError(f"{option} must be TOP:BASE or WELL=TOP:BASE in the file's depth unit (e.g. 3351.6:4300 "
                         f"or F11B=3351.6:4300), got {text!r}") from None
    if not (np.isfinite(a) and np.isfinite(b)) or a >= b:
        raise InputError(f"{option} must be TOP:BASE with TOP < BASE, got {text!r}")
    return a, b


def parse_depth_specs(values, option: str) -> list:
    """``["3351.6:4300", "F11B=3400:4000"]`` -> ``[(None, (3351.6, 4300.0), "--x 3351.6:4300"), ("F11B", ...)]``.

    Each spec is ``(well key or None for every well, (top, base), the option as typed)``.

    Raises
    ------
    InputError
        A value that is not ``TOP:BASE`` or ``WELL=TOP:BASE`` with TOP < BASE, or two bare intervals.
    """
    specs = []
    for v in values or ():
        key, eq, text = str(v).rpartition("=")
        specs.append((key.strip() or None if eq else None, _interval(text if eq else v, option), f"{option} {v}"))
    if sum(k is None for k, _, _ in specs) > 1:
        raise InputError(f"{option}: give one TOP:BASE for all wells, or WELL=TOP:BASE per well, not several "
                         "bare intervals")
    return specs


def read_manifest(path) -> list:
    """The :class:`WellEntry` rows of a manifest CSV (columns ``file, well, role, top, base``).

    Raises
    ------
    DataFileError
        Unreadable file, a missing ``file``/``role`` column, an unknown role, a top without a base,
        a bad number or a listed file that does not exist (naming the line).
    """
    path = Path(path)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise DataFileError(f"manifest {path}: cannot be read as CSV ({' '.join(str(exc).split())})") from None
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    missing = [c for c in ("file", "role") if c not in frame.columns]
    if missing:
        raise DataFileError(f"manifest {path}: no column {', '.join(missing)} (columns: file, well, role, top, base; "
                            f"found: {', '.join(frame.columns)})")
    entries = []
    for i, row in enumerate(frame.to_dict("records")):
        entries.append(_manifest_entry(path, i + 2, {k: str(v).strip() for k, v in row.items()}))
    if not entries:
        raise DataFileError(f"manifest {path}: no well listed")
    return entries


def _manifest_entry(path: Path, line: int, row: dict) -> WellEntry:
    where = f"manifest {path}, line {line}"
    role = row["role"].lower()
    if role not in ROLES:
        raise DataFileError(f"{where}: role {row['role']!r} is not one of {', '.join(ROLES)}")
    file = Path(row["file"]) if Path(row["file"]).is_absolute() else path.parent / row["file"]
    if not row["file"] or not file.is_file():
        raise DataFileError(f"{where}: well file {row['file']!r} not found (looked for {file})")
    top, base = row.get("top", ""), row.get("base", "")
    if bool(top) != bool(base):
        raise DataFileError(f"{where}: give both top and base, or neither (the whole valid log)")
    interval = _interval(f"{top}:{base}", where) if top else (None, None)
    return WellEntry(str(file), role, *interval, well=row.get("well") or None)


# --------------------------------------------------------------------------- matching wells to keys
def _norm(text: str) -> str:
    return re.sub(r"[^0-9A-Z]", "", str(text).upper())


def _keys(log) -> list:
    stem = Path(log.source).stem if log.source else ""
    return [k for k in (log.name, stem, Path(log.source).name if log.source else "") if k]


def match_well(key: str, logs, option: str):
    """The one log of ``logs`` that ``key`` names: by well name or file name, exactly (ignoring case), else
    as a unique part of one, ignoring spaces and punctuation (``F11B`` names ``15/9-F-11 B``).

    Raises
    ------
    InputError
        No log matches (the message lists the wells), or several do (it lists them).
    """
    exact = [g for g in logs if key.upper() in (k.upper() for k in _keys(g))]
    found = exact or [g for g in logs if _norm(key) and any(_norm(key) in _norm(k) for k in _keys(g))]
    if len(found) == 1:
        return found[0]
    listing = "; ".join(f"{g.name} ({Path(g.source).name})" for g in (found or logs))
    if found:
        raise InputError(f"{option}: {key!r} matches several wells ({listing}); use more of the name")
    raise InputError(f"{option}: {key!r} names none of the wells ({listing})")


# --------------------------------------------------------------------------- intervals
def valid_interval(log, names) -> tuple:
    """``(top, base)``: the first and last depth of ``log`` where every curve of ``names`` is present.

    Raises
    ------
    DataFileError
        No depth has them all (naming the well, its depth range and each curve's valid count).
    """
    ok = log.valid_mask(names)
    if not ok.any():
        counts = ", ".join(f"{m} {int(np.isfinite(log.curve(m)).sum())}" for m in names)
        raise DataFileError(f"{log.label}: no depth has every one of {', '.join(names)} (log {log.depth[0]:g} to "
                            f"{log.depth[-1]:g} {log.depth_unit}; valid samples per curve: {counts})")
    idx = np.flatnonzero(ok)
    return float(log.depth[idx[0]]), float(log.depth[idx[-1]])


def _cut(log, names, interval, role: str):
    """``log`` cut to ``interval`` (None: its whole valid log), refused when it holds no valid sample."""
    if interval is None:
        return log.interval(*valid_interval(log, names))
    part = log.interval(*interval)
    text = f"{interval[0]:g}:{interval[1]:g} {log.depth_unit}"
    label = {"train": "training", "val": "validation", "test": "test"}[role]
    for m in names:
        values = np.asarray(part.curve(m), dtype=np.float64)
        if not np.isfinite(values).any():
            kind = "target" if m == names[-1] else "input"
            raise DataFileError(f"{log.source or log.name}: {kind} curve {m} has no valid (non-null) sample in the "
                                f"{label} interval {text} ({len(values)} samples, all null) of well {log.name!r}")
    if not part.valid_mask(names).any():
        counts = ", ".join(f"{m} {int(np.isfinite(part.curve(m)).sum())}" for m in names)
        raise DataFileError(f"{log.label}: no valid sample in its {label} interval {text}: no depth has every one of "
                            f"{', '.join(names)} (valid samples per curve: {counts})")
    return part


# --------------------------------------------------------------------------- reading and assembling
def _read(paths, names, aliases, use_defaults: bool = False, reading: dict | None = None) -> tuple:
    """Each distinct file read once (every sheet of a workbook, unless ``reading`` names one), its curves
    renamed to ``names`` and the units ``reading["units"]`` states: ``({path: [logs]}, {well: {asked: used}})``."""
    reading = dict(reading or {})
    reading["stated_units"] = reading.pop("units", None) or {}
    logs, used = {}, {}
    for p in paths:
        key = str(Path(p).resolve())
        if key in logs:
            continue
        logs[key] = []
        for raw in read_wells(p, **reading):
            log, mapping = with_requested_names(raw, names, aliases, use_defaults=use_defaults)
            taken = {g.name for gs in logs.values() for g in gs}
            if log.name in taken:                 # two files of one well name: tell them apart by file
                log = replace(log, name=f"{log.name} ({Path(p).stem})")
            logs[key].append(log)
            used[log.name] = mapping
    return logs, used


def _check_units_named(units, logs: dict) -> None:
    """Refuse a ``--unit CURVE=UNIT`` whose curve is in none of the wells (a typing error, not a unit)."""
    every = [g for gs in logs.values() for g in gs]
    for curve, unit in (units or {}).items():
        if every and not any(g.key_of(curve) in g.curves or names_depth(g, curve) for g in every):
            state_units(every[0], {curve: unit})       # raises CurveNotFoundError listing the curves


def _logs_of(logs: dict, path) -> list:
    return logs[str(Path(path).resolve())]


def _assemble(items, names, window: int | None, curves_used: dict) -> WellDataset:
    """Cut every ``(log, role, interval or None, label)`` item; forecasts of a training well keep clear of it."""
    order = sorted(items, key=lambda it: ROLES.index(it[1]))
    parts = {role: [] for role in ROLES}
    trained = {}                                   # id(log) -> [(top, base, label)] of its training parts
    for g, role, interval, label in order:
        part = _cut(g, names, interval, role)
        tb = (float(part.depth[0]), float(part.depth[-1]))
        if role == "train":
            trained.setdefault(id(g), []).append((*tb, label or f"the whole valid log {tb[0]:g}:{tb[1]:g}"))
        for top, base, tlabel in trained.get(id(g), []) if role != "train" else ():
            text = label or f"{'test' if role == 'test' else 'validation'} part {tb[0]:g}:{tb[1]:g}"
            part = _forecast_part(g, (top, base), (float(part.depth[0]), float(part.depth[-1])), tlabel, text)
            part = _cut(part, names, None, role)
        parts[role].append((g, part))
    if not parts["train"]:
        raise InputError("no training well: give --data FILE (or manifest rows with role train)")
    common_depth_unit([g for role in ROLES for g, _ in parts[role]])
    train = [p for _, p in parts["train"]]
    # validation and test wells are held to what predict checks: units, depth unit, step, fractions
    warnings = check_wells(train, [p for role in ("val", "test") for _, p in parts[role]], names, window=window)
    if window:
        intervals = "; ".join(dict.fromkeys(f"{p.depth[0]:g}:{p.depth[-1]:g}" for p in train))
        check_training_logs([g for g, _ in parts["train"]], train, names[:-1], names[-1], window, intervals)
    boundary = None
    if parts["test"] and id(parts["test"][0][0]) in trained:
        top, base, _ = trained[id(parts["test"][0][0])][0]
        boundary = base if float(parts["test"][0][1].depth[0]) >= top else top
    whole = list({id(g): g for g, _ in parts["train"]}.values())
    return WellDataset(train, [p for _, p in parts["val"]], [p for _, p in parts["test"]], curves_used, boundary,
                       whole, warnings)


def _role_items(role, wells, specs, option, all_logs, train_wells) -> list:
    """Items of one role from its wells and ``--<role>-depth`` specs (keyed, bare, or none: whole valid log)."""
    keyed = [(match_well(k, all_logs, option), iv, text) for k, iv, text in specs if k]
    bare = next(((iv, text) for k, iv, text in specs if k is None), None)
    items, seen = [], set()
    for g, iv, text in keyed:
        if not any(g is w for w in wells) and not (role != "train" and any(g is w for w in train_wells)):
            raise InputError(f"{text}: {g.name} is not a {role} well (give its file with "
                             f"{'--data' if role == 'train' else '--' + role + '-data'})")
        items.append((g, role, iv, text))
        seen.add(id(g))
    targets = wells if wells or role == "train" else (train_wells if bare else [])
    for g in targets:                     # a bare test/val interval without such wells splits the training wells
        if id(g) not in seen:
            iv, text = bare if bare else (None, None)
            items.append((g, role, iv, text))
    return items


def build_dataset(data, *, inputs, target, test_data=(), val_data=(), train_depth=(), test_depth=(), val_depth=(),
                  manifest=None, aliases=None, window: int | None = None,
                  default_aliases: bool = False, units=None, depth_column: str | None = None,
                  sheet: str | None = None) -> WellDataset:
    """Read the wells of the command-line options (or a manifest) and cut each to its role's interval.

    Parameters
    ----------
    data, val_data, test_data : paths of the training, validation and test wells
    train_depth, val_depth, test_depth : ``TOP:BASE`` / ``WELL=TOP:BASE`` strings (see the module notes)
    manifest : path of a manifest CSV, instead of (or besides) the paths above
    inputs, target : mnemonics; aliases : ``["PHIF=PHIE", ...]`` (see :func:`glassformer.data.resolve_curves`)
    window : the window in samples: a training interval needs a gap-free run that long
    default_aliases : also try the common mnemonics of :data:`glassformer.data.DEFAULT_ALIASES`
        (off by default: the wells a model learns from use the curves the user named, or aliased)
    units : ``{curve: unit}`` the user states (``--unit``), replacing the files' units
    depth_column : the depth column of CSV and Excel wells (``--depth-column``)
    sheet : the sheet of Excel workbooks (``--sheet``); by default every sheet is a well

    Returns
    -------
    WellDataset

    Raises
    ------
    CurveNotFoundError
        A well lacks an input or the target, and every alias of it (naming the well and the curve).
    DataFileError
        A well with no valid sample in its interval (naming the well and the interval), a bad
        manifest, several aliases of one curve in a well (listing them).
    DepthError
        An interval outside a well's log, a forecast overlapping its training interval, mixed units.
    InputError
        A well key that matches no well or several.
    """
    names = [curve_name(m) for m in (*inputs, target)]
    entries = read_manifest(manifest) if manifest else []
    paths = [*data, *val_data, *test_data, *(e.path for e in entries)]
    reading = {"units": dict(units or {}), "depth_column": depth_column, "sheet": sheet}
    logs, used = _read(paths, names, aliases, default_aliases, reading)
    _check_units_named(units, logs)
    for e in entries:
        if e.well and len(_logs_of(logs, e.path)) == 1:
            g = _logs_of(logs, e.path)[0]
            named = replace(g, name=e.well) if g.name != e.well else g
            used[e.well] = used.pop(g.name, used.get(e.well))
            logs[str(Path(e.path).resolve())] = [named]
    all_logs = [g for gs in logs.values() for g in gs]
    wells = {role: [g for p in ps for g in _logs_of(logs, p)] for role, ps in (("train", data), ("val", val_data),
                                                                              ("test", test_data))}
    items = [(g, e.role, None if e.top is None else (e.top, e.base),
              f"manifest {e.role} interval {e.top:g}:{e.base:g}" if e.top is not None else None)
             for e in entries for g in _logs_of(logs, e.path)]
    for role, values, option in (("train", train_depth, "--train-depth"), ("val", val_depth, "--val-depth"),
                                 ("test", test_depth, "--test-depth")):
        items += _role_items(role, wells[role], parse_depth_specs(values, option), option, all_logs, wells["train"])
    return _assemble(items, names, window, used)
