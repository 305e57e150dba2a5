"""The manifest of a batch prediction: one row per well, as ``manifest.csv`` and ``manifest.json``.

Both files are rewritten atomically while the batch runs, so that at any moment they are complete
files listing the wells finished so far; ``--resume`` reads them back.  Rewriting them after every
well would cost a batch of thousands of wells more than the wells themselves, so a rewrite waits
until the time since the last one is at least :data:`REWRITE_FACTOR` times what that one took (the
files then take at most about 5 % of the batch); a timer writes the rows that arrived meanwhile
when that time is up, even if no other well finishes (a well that hangs delays nothing).  A batch
killed outright loses at most the rows of the wells finished in that short wait, whose outputs are
complete files: ``--resume`` predicts those wells again.

``manifest.json`` holds the batch's settings (the model's checksum,
:func:`glassformer.wells.predictor.model_identity`, output format, depth range)
beside the rows; a resume with other settings is refused, so one folder never mixes predictions
of two models.
"""

from __future__ import annotations

import csv
import io as _io
import json
import threading
import time
from pathlib import Path

from .. import io
from ..errors import InputError

__all__ = ["MANIFEST_COLUMNS", "Manifest"]

#: The columns of ``manifest.csv`` (and the keys of each row of ``manifest.json``), in order.
MANIFEST_COLUMNS = ("well", "file", "output", "samples", "samples_predicted", "samples_flagged", "seconds",
                    "status", "error")

#: A rewrite waits until the time since the last one is this many times what that one took.
REWRITE_FACTOR = 20.0

MANIFEST_VERSION = 1


class Manifest:
    """``manifest.csv`` and ``manifest.json`` of a batch in ``folder``.

    Parameters
    ----------
    folder : str or Path
        The batch's output folder.
    settings : dict
        What must match for a resume: the model's checksum, output format, depth range (JSON-able).
    about : dict, optional
        Written beside them, never compared (the model path as given, the engine).
    """

    def __init__(self, folder, settings: dict, about: dict | None = None):
        self.folder = Path(folder)
        self.settings = json.loads(json.dumps(settings))     # tuples as lists: as they read back
        self.about = dict(about or {})
        self._last_end = None
        self._last_cost = 0.0
        self._lock = threading.Lock()
        self._pending = None
        self._timer = None

    @property
    def json_path(self) -> Path:
        return self.folder / "manifest.json"

    @property
    def csv_path(self) -> Path:
        return self.folder / "manifest.csv"

    def exists(self) -> bool:
        """True when either manifest file is in the folder."""
        return self.json_path.exists() or self.csv_path.exists()

    # ----- writing
    def write(self, rows: list) -> None:
        """Rewrite both files now with the finished rows (None entries are wells not finished yet)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._pending = None
            self._write(list(rows))

    def update(self, rows: list) -> bool:
        """Rewrite the files, or leave it to a timer when the last rewrite was too recent for its cost.

        Returns True when the files were rewritten now.
        """
        with self._lock:
            self._pending = list(rows)
            wait = 0.0 if self._last_end is None else \
                self._last_end + REWRITE_FACTOR * self._last_cost - time.perf_counter()
            if wait <= 0:
                self._write(self._pending)
                self._pending = None
                return True
            if self._timer is None:
                self._timer = threading.Timer(wait, self._flush)
                self._timer.daemon = True
                self._timer.start()
            return False

    def _flush(self) -> None:
        with self._lock:
            self._timer = None
            if self._pending is not None:
                self._write(self._pending)
                self._pending = None

    def _write(self, rows: list) -> None:
        start = time.perf_counter()
        done = [r for r in rows if r is not None]
        status = [r["status"] for r in done]
        body = {"manifest_version": MANIFEST_VERSION, **self.about, **self.settings,
                "summary": {"wells": len(rows), "ok": status.count("ok"), "failed": status.count("error"),
                            "not_finished": len(rows) - len(done)},
                "columns": list(MANIFEST_COLUMNS), "rows": done}
        io.atomic_write_json(self.json_path, body)
        text = _io.StringIO()
        table = csv.DictWriter(text, fieldnames=MANIFEST_COLUMNS, extrasaction="ignore", lineterminator="\n")
        table.writeheader()
        table.writerows(done)                        # None (a failed well's counts) is written blank
        io.atomic_write_text(self.csv_path, text.getvalue())
        self._last_end = time.perf_counter()
        self._last_cost = self._last_end - start

    # ----- reading back (resume)
    def read(self) -> dict:
        """The previous batch's ``manifest.json``.

        Raises
        ------
        InputError
            No manifest in the folder, or one that cannot be read (the message says to start
            again without ``--resume``).
        """
        if not self.json_path.exists():
            raise InputError(f"--resume: {self.folder} holds no manifest.json of an earlier batch; run without "
                             "--resume to start one")
        try:
            body = json.loads(self.json_path.read_text(encoding="utf-8"))
            rows = body["rows"]
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                raise TypeError("rows is not a list of objects")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(f"--resume: {self.json_path} cannot be read ({type(exc).__name__}: {exc}); run "
                             "without --resume and with --overwrite to start the batch again") from None
        return body

    def completed(self) -> dict:
        """Rows of the previous batch that need no new run, by output file name.

        A row counts when its status is ``ok`` and its output file exists (outputs are written
        atomically, so an existing one is complete).

        Raises
        ------
        InputError
            No readable manifest, or one written with other settings (the message lists them).
        """
        body = self.read()
        differ = [_difference(key, body.get(key), value) for key, value in self.settings.items()
                  if body.get(key) != value]
        if differ:
            raise InputError(f"--resume: the batch in {self.folder} was run with other settings "
                             f"({'; '.join(differ)}); resume with the same --model, --format and --depth, or "
                             "start again with --overwrite")
        return {r["output"]: r for r in body["rows"]
                if r.get("status") == "ok" and r.get("output") and (self.folder / r["output"]).is_file()}


def _difference(key: str, there, here) -> str:
    if key == "model_checksum":
        return "the model differs (its checksum is not the one recorded)"
    return f"{key} is {there!r} there, {here!r} here"
