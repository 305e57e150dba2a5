"""A saved model, loaded once, that knows which of the run's models it predicts with and which files it is.

``glassformer predict`` reads a run folder (or its ``model/`` sub-folder, or a deep ensemble) once
into a :class:`Predictor` and hands that object down: the single-well form and every well of a
batch predict with it, and a batch's manifest records its identity.  Its *name* is the model whose
prediction it writes, by its name in the run's tables (``"transformer"``, ``"gradient boosting"``,
``"blend"``, ...); its *identity* is the folder and the checksum the model files carry
(:func:`model_identity`), which changes whenever the arrays or the configuration do.

Between processes a predictor travels as its folder and checksum, never as a pickled model (the
engines' rule, :mod:`glassformer.parallel`): a worker reads the folder again and refuses files whose
checksum is not the one the batch was planned with.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..errors import InputError, ModelFileError
from ..io import saved_checksum
from .checks import target_unit
from .ensemble import DeepEnsemble, find_ensemble
from .model import WellModel

__all__ = ["Predictor", "model_identity"]


def model_identity(model_dir, ensemble_file=None) -> dict:
    """What identifies a saved model (a run folder or its ``model/``) or a deep ensemble, as plain data.

    A single model: the checksum :func:`glassformer.io.save_model` stored in ``model.json``
    (``{"algorithm", "arrays", "meta"}``).  An ensemble: ``{"ensemble": SHA-256 of ensemble.json,
    "members": [each member's checksum]}``.  ``ensemble_file``: the ensemble's ``ensemble.json`` when
    the caller has looked it up already (:func:`~glassformer.wells.ensemble.find_ensemble`).

    Raises
    ------
    ModelFileError
        No ``model.json`` (or ``ensemble.json``) there, or one without a readable checksum.
    """
    found = ensemble_file if ensemble_file is not None else find_ensemble(model_dir)
    if found is not None:
        try:
            members = json.loads(found.read_text(encoding="utf-8"))["members"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelFileError(f"{found}: no readable member list ({type(exc).__name__}: {exc})") from None
        return {"ensemble": hashlib.sha256(found.read_bytes()).hexdigest(),
                "members": [_checksum(found.parent / m) for m in members]}
    return _checksum(model_dir)


def _checksum(model_dir) -> dict:
    folder = Path(model_dir)
    found = next((f / "model.json" for f in (folder, folder / "model") if (f / "model.json").is_file()), None)
    if found is None:
        raise ModelFileError(f"{model_dir}: no model found (expected model.json there or in model/)"
                             + _cv_hint(folder))
    return saved_checksum(found)


def _cv_hint(folder: Path) -> str:
    """Why a cross-validation run folder has no model, and what writes one ("" for any other folder)."""
    try:
        command = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("command")
    except (OSError, ValueError, AttributeError):
        return ""
    if command != "cv":
        return ""
    return ("; this is a cross-validation run (glassformer cv), which scores models fitted per fold and keeps no "
            "fitted model: glassformer train --data ... --out RUN writes one, then predict with --model RUN")


def canonical_model_name(use: str | None, names) -> str | None:
    """The name in ``names`` that ``use`` (``--use``) means, compared without case and extra blanks
    (``"Gradient  Boosting"`` means ``"gradient boosting"``); ``use`` itself when none does, None for None."""
    if use is None:
        return None
    key = " ".join(str(use).split()).lower()
    return next((n for n in names if " ".join(str(n).split()).lower() == key), key)


class Predictor:
    """A saved well model (or deep ensemble) loaded once, with the name of the model it predicts with.

    Build it with :meth:`load`.

    Attributes
    ----------
    folder : Path
        The folder it was read from, as given.
    wm : WellModel
        The well model (an ensemble's first member: names, units and scalers are the members' own).
    ensemble : DeepEnsemble or None
        The deep ensemble, whose P50 is the transformer's prediction.
    use : str or None
        The model whose prediction is written, by its name in the run's tables; None: the transformer.
    every : bool
        Every model of the run is loaded, to write one curve each (``--all``).
    checksum : dict
        The model files' checksum (:func:`model_identity`), read before the model.
    """

    def __init__(self, folder, wm: WellModel, ensemble: DeepEnsemble | None, *, use: str | None = None,
                 every: bool = False, checksum: dict | None = None):
        self.folder = Path(folder)
        self.wm = wm
        self.ensemble = ensemble
        self.use = use
        self.every = bool(every)
        self.checksum = checksum

    @classmethod
    def load(cls, model_dir, *, use: str | None = None, every: bool = False,
             checksum: dict | None = None) -> "Predictor":
        """Read ``model_dir`` once: a run folder written by ``glassformer train``, its ``model/``, or an ensemble.

        Parameters
        ----------
        model_dir : str or Path
        use : str, optional
            Predict with this model of the run, by its name in the run's tables (``--use``; any case, blanks
            beyond single spaces ignored).
        every : bool, default False
            Load every model the run saved (``--all``; also needed for ``use`` other than the transformer).
        checksum : dict, optional
            The checksum the files must carry (a worker re-reading the folder of a planned batch).

        Raises
        ------
        ModelFileError
            No readable model or ensemble in ``model_dir``, or files whose checksum is not ``checksum``.
        InputError
            ``use`` names no model of the run (the message lists those it has).
        """
        ensemble_file = find_ensemble(model_dir)                  # looked up once, for the identity and the read
        identity = model_identity(model_dir, ensemble_file)
        if checksum is not None and identity != checksum:
            raise ModelFileError(f"{model_dir}: the model files changed since the batch was planned (their checksum "
                                 "differs); predict again with the same --model")
        use = canonical_model_name(use, ("transformer",))
        wm, ensemble = _read(model_dir, ensemble_file, every_model=bool(every or (use not in (None, "transformer"))))
        use = canonical_model_name(use, wm.model_names())
        if use is not None and use not in wm.model_names():
            raise InputError(f"--use {use!r}: the run in {model_dir} has no such model; it has: "
                             f"{', '.join(wm.model_names())}")
        return cls(model_dir, wm, ensemble, use=use, every=every, checksum=identity)

    def __reduce__(self):
        # across processes the model travels as its folder (re-read and checked there), never pickled
        return _reload, (os.path.abspath(self.folder), self.use, self.every, self.checksum)

    @property
    def name(self) -> str:
        """The model whose prediction is written, as the run's tables name it (``"transformer"`` by default)."""
        return self.use or "transformer"

    @property
    def identity(self) -> dict:
        """``{"folder", "checksum"}``: where it was read from and which files those were."""
        return {"folder": str(self.folder), "checksum": self.checksum}

    @property
    def curve(self) -> str:
        """The prediction curve's name, e.g. ``KLOGH_PRED``."""
        return f"{self.wm.target_name}_PRED"

    @property
    def unit(self) -> str:
        """The prediction's unit: the training files' target unit (``mD`` for permeability; ``""`` when none)."""
        return target_unit(getattr(self.wm, "training_data_", None))

    @property
    def model_name(self) -> str:
        """The model written, in words: ``--use``'s name, ``"transformer (mean of 5 members)"`` or ``"transformer"``."""
        if self.use:
            return self.use
        members = getattr(self.wm.model_, "members", None)
        return f"transformer (mean of {len(members)} members)" if members else "transformer"

    @property
    def label(self) -> str:
        """What an output file's curve description names as the model (``--use``'s name, or the network and
        its source folder)."""
        if self.use:
            return self.use
        source = getattr(self.wm.model_, "source_", None)
        return f"{self.model_name}, {source}" if source else self.model_name

    def describe(self) -> str:
        """One phrase: ``"transformer (mean of 5 members) of runs/f11b (checksum 1a2b3c4d5e6f)"``."""
        digest = (self.checksum.get("meta") or self.checksum.get("ensemble") or "") if self.checksum else ""
        kind = f", ensemble of {len(self.ensemble)}" if self.ensemble is not None else ""
        return f"{self.model_name}{kind} of {self.folder}" + (f" (checksum {digest[:12]})" if digest else "")

    def __repr__(self) -> str:
        return f"Predictor({self.describe()})"


def _reload(folder: str, use, every: bool, checksum) -> Predictor:
    """A predictor re-read from its folder in another process, refused if its files changed meanwhile."""
    return Predictor.load(folder, use=use, every=every, checksum=checksum)


def _read(model_dir, found, *, every_model: bool) -> tuple:
    """``(wm, ensemble)``: the well model of ``model_dir`` and, for a deep ensemble (``found``: its
    ``ensemble.json``), the ensemble (else None).

    ``wm`` is the ensemble's first member then; with ``every_model`` it carries every baseline the
    run saved in its ``model/`` folder (the tree ensembles among them), fitted on the same training
    data as the members.
    """
    if found is None:
        return WellModel.load(model_dir), None
    ensemble = DeepEnsemble.load(found.parent)
    run_model = Path(model_dir) / "model"
    if every_model and (run_model / "model.json").is_file():
        ensemble.first.baselines_ = WellModel.load(run_model).baselines_
    return ensemble.first, ensemble
