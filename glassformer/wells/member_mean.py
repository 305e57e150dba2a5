"""The transformer of a well model as the mean of several seeds' transformers, and its files.

One transformer's blind-well error depends on its seed (on the Volve F wells, 15/9-F-11 B scores
1.32, 1.12 and 0.79 log10 mD for seeds 42, 0 and 1); the mean of a few members trained from
different seeds on the same windows removes most of that lottery (Lakshminarayanan, Pritzel and
Blundell 2017).  On those wells, chosen by nested blind-well cross-validation among d_model 16 and
32, 30 and 60 epochs, one seed or a 5-member mean, a 5-member mean won the inner folds of every
outer fold, and its held-out error was below the single fit's at both widths, so ``glassformer
train`` and ``glassformer cv`` predict with it by default (``--members``).

:class:`MemberMean` is a window regressor like the transformer it stands in for: the well model's
``predict_log``, the blend and every table use it unchanged.  Its files: member 0 is the model
folder's own ``model.npz`` + ``model.json`` (so a reader that knows one transformer reads member 0),
every other member a model folder of its own in ``members/seed_<seed>.<digest>/``, and member 0's
``model.json`` lists them with their checksums, so a member replaced or changed is refused.
(:func:`glassformer.wells.member_fit.fit_member_mean` trains the members.)
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np

from ..errors import ModelFileError
from ..io import saved_checksum
from ..models import SequenceRegressor

__all__ = ["DEFAULT_MEMBERS", "MEMBERS_FOLDER", "MemberMean", "prune_members"]

#: Transformer members whose mean ``glassformer train`` and ``glassformer cv`` predict with (the nested study's choice).
DEFAULT_MEMBERS = 5

#: The sub-folder of a model folder holding members 1, 2, ... (member 0 is the model folder's own files).
MEMBERS_FOLDER = "members"


class MemberMean:
    """The mean prediction of fitted transformers (``SequenceRegressor``) that share scalers and windows.

    Parameters
    ----------
    members : list of fitted SequenceRegressor (at least one), trained on the same windows.
    seeds : list of int, each member's seed (kept for the record; they name the members' folders).
    """

    def __init__(self, members, seeds):
        self.members = members
        self.seeds = seeds

    def predict(self, X, positions) -> np.ndarray:
        """The members' mean: ``X (n, T, n_inputs)`` -> ``(n, T, 1)`` in scaled target units (the scaler
        is affine, so the mean in scaled units is the mean in model units)."""
        return np.mean([m.predict(X, positions) for m in self.members], axis=0)   # (K, n, T, 1) -> (n, T, 1)

    def num_parameters(self) -> int:
        """Trainable values of all members together."""
        return int(sum(m.network_.num_parameters() for m in self.members))

    @property
    def history_(self) -> list:
        """The first member's training history (early stopping chose each member's own epoch)."""
        return self.members[0].history_

    @property
    def source_(self) -> str | None:
        """Where member 0 was loaded from (None when fitted in this process)."""
        return getattr(self.members[0], "source_", None)

    def get_params(self, deep: bool = True) -> dict:
        """The members' common settings: member 0's ``get_params`` (its ``random_state`` is ``seeds[0]``)."""
        return self.members[0].get_params(deep=deep)

    def trace(self, X, positions) -> dict:
        """Member 0's intermediates (:meth:`SequenceRegressor.trace`): attention is one network's, never averaged."""
        return self.members[0].trace(X, positions)

    # --- files ----------------------------------------------------------------------------------
    def save(self, directory, *, overwrite: bool = False, extra: dict | None = None) -> Path:
        """Save member 0 into ``directory`` (with ``extra`` and the member list in its ``model.json``), every
        other member into ``directory/members/seed_<seed>.<digest>``; returns member 0's ``.npz`` path.

        Each further member's folder is named by its seed and the digest of its weights, and member 0's
        ``model.json`` is written last, so a save that dies halfway leaves the previous model whole (the
        new folders are removed again); :func:`prune_members` removes the previous members afterwards.

        Raises
        ------
        ModelFileError
            As :meth:`SequenceRegressor.save` (existing files without ``overwrite``).
        """
        folder = Path(directory)
        root = folder / MEMBERS_FOLDER
        before = set(root.iterdir()) if root.is_dir() else set()
        names, checksums = [], []
        try:
            for seed, member in zip(self.seeds[1:], self.members[1:]):
                name = f"{MEMBERS_FOLDER}/seed_{int(seed)}.{_digest(member)}"
                member.save(folder / name, overwrite=True)          # named by its content: the same bytes, or new
                names.append(name)
                checksums.append(saved_checksum(folder / name))
            record = {"seeds": [int(s) for s in self.seeds], "folders": names, "checksums": checksums}
            return self.members[0].save(folder, overwrite=overwrite, extra={**(extra or {}), "members": record})
        except BaseException:
            for sub in (set(root.iterdir()) if root.is_dir() else set()) - before:
                shutil.rmtree(sub, ignore_errors=True)
            raise

    @classmethod
    def load(cls, first: SequenceRegressor, folder) -> "MemberMean | SequenceRegressor":
        """The model a folder holds, given its member 0 (``SequenceRegressor.load(folder)``): ``first`` itself
        when its ``model.json`` lists no other members, else the mean of all of them.

        Raises
        ------
        ModelFileError
            A member folder missing, unreadable or outside ``members/``, or holding files other than those
            saved with member 0.
        """
        record = (getattr(first, "extra_", None) or {}).get("members")
        if not record:
            return first
        folder = Path(folder)
        members = [first]
        for name, expected in zip(record["folders"], record["checksums"]):
            parts = Path(name).parts
            if len(parts) != 2 or parts[0] != MEMBERS_FOLDER or parts[1] in ("", ".", ".."):
                raise ModelFileError(f"{folder / 'model.json'}: member folder {name!r} is not a folder of "
                                     f"{folder / MEMBERS_FOLDER}; train the model again")
            if not (folder / name).is_dir():
                raise ModelFileError(f"{folder / name}: this transformer member is missing (saved with "
                                     f"{folder / 'model.json'}); train the model again")
            if saved_checksum(folder / name) != expected:
                raise ModelFileError(f"{folder / name}: this transformer member is not the one saved with "
                                     f"{folder / 'model.json'} (its checksum differs); train the model again")
            members.append(SequenceRegressor.load(folder / name))
        return cls(members, [int(s) for s in record["seeds"]])


def prune_members(folder) -> None:
    """Remove the member folders of an earlier save that the model now in ``folder`` (its ``model.json``)
    does not list."""
    root = Path(folder) / MEMBERS_FOLDER
    if not root.is_dir():
        return
    meta = json.loads((Path(folder) / "model.json").read_text(encoding="utf-8"))
    record = ((meta.get("config") or {}).get("extra") or {}).get("members") or {}
    kept = {Path(name).name for name in record.get("folders", [])}
    for sub in root.iterdir():
        if sub.name not in kept:
            shutil.rmtree(sub, ignore_errors=True) if sub.is_dir() else sub.unlink(missing_ok=True)
    if not any(root.iterdir()):
        root.rmdir()


def _digest(member: SequenceRegressor) -> str:
    """12 hex digits of the SHA-256 of a member's weights (names and bytes, in name order)."""
    h = hashlib.sha256()
    for name, value in sorted(member.network_.state_dict().items()):
        h.update(name.encode())
        h.update(np.ascontiguousarray(value).tobytes())
    return h.hexdigest()[:12]
