"""Saving and rebuilding models: ``model.npz`` (arrays) + ``model.json`` (config), never pickled.

* models whose constructor arguments are their ``config`` dict
  (:class:`~glassformer.models.Seq2SeqTransformer`, :class:`~glassformer.models.DecoderOnlyLM`):
  ``{"model": config, "extra": ...}`` (:func:`save_configured`, :func:`load_configured`);
* the scikit-learn-style window regressors: ``get_params()``, the network's input and output
  widths, whether it is fitted and its training history (:func:`save_estimator`,
  :func:`load_estimator`).

Both go through :func:`glassformer.io.save_model` (atomic, checksummed).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import io
from ..errors import ModelFileError
from ..train import History


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


# --------------------------------------------------------------------------- the window regressors
#: Option values renamed since format version 1 (the chapter's encoding and initialisation).
_RENAMED_VALUES = {"positional": {"seed": "chapter"}, "init": {"seed": "chapter"}}


def save_estimator(est, directory, *, overwrite: bool = False, extra: dict | None = None) -> Path:
    """Write a fitted (or built) window regressor: ``network_.state_dict()`` and its ``model.json``.

    Raises
    ------
    ModelFileError
        ``directory`` is an existing file, the model files exist and ``overwrite`` is False, or a
        setting is a Python function (``positional=f``).
    """
    target = Path(directory)
    folder = target.parent if target.suffix in (".npz", ".json") else target
    blocking = next((f for f in (folder, *folder.parents) if f.exists()), None)
    if blocking is not None and not blocking.is_dir():
        what = "" if blocking == folder else f" ({blocking} is a file)"
        raise ModelFileError(f"{type(est).__name__}.save: {folder} is an existing file, not a folder{what}; "
                             "give a folder path (created if missing)")
    functions = [k for k, v in est.get_params(deep=False).items() if callable(v)]
    if functions:                         # model.json holds settings, never code
        raise ModelFileError(f"{type(est).__name__}.save: {', '.join(functions)} is a Python function, which a model "
                             "file cannot hold; register it as a named encoding (glassformer.nn.positional.register) "
                             "to save the model, or keep its weights with network_.state_dict()")
    history = getattr(est, "history_", None)
    config = {"format_version": est._format_version, "params": est.get_params(deep=False),
              "n_features_in": est.n_features_in_, "n_targets": est.n_targets_,
              "is_fitted": bool(getattr(est, "is_fitted_", False)),
              "history": history.to_dict() if history is not None else None}
    if extra:
        config["extra"] = extra
    return io.save_model(directory, dict(est.network_.state_dict()), config, kind=est._kind, overwrite=overwrite)


def load_estimator(cls, directory):
    """Rebuild a window regressor written by :func:`save_estimator` (format 2) or by glassformer 0.1 (format 1).

    ``directory``: the folder given to ``save``, either file of the pair, or a run folder whose
    model is in its ``model/`` sub-folder.

    Raises
    ------
    ModelFileError
        Missing, corrupt or foreign files, another kind of model, an unsupported format version,
        or a config that does not rebuild.
    """
    location = model_location(directory, f"{cls.__name__}.load")
    state, config, kind = io.load_model(location)
    if kind != cls._kind:
        raise ModelFileError(f"{directory}: holds a {kind!r}, not a {cls._kind!r}")
    version = config.get("format_version")
    if version not in (1, cls._format_version):
        raise ModelFileError(f"{directory}: format_version {version!r} is not supported "
                             f"(this glassformer reads versions 1 and {cls._format_version})")
    try:
        params = dict(config["params"])
        if version == 1:          # 0.1 stored the network's width in the constructor arguments
            n_features, n_targets = params.pop("n_features", 1), params.pop("n_targets", 1)
            for key, renamed in _RENAMED_VALUES.items():
                if params.get(key) in renamed:
                    params[key] = renamed[params[key]]
        else:
            n_features, n_targets = config["n_features_in"], config["n_targets"]
        model = cls(**params)
        model.build_network(n_features, n_targets)
        model.network_.load_state_dict(state)
    except (TypeError, KeyError, ValueError) as exc:
        raise ModelFileError(f"{directory}: cannot rebuild the model from its config ({exc})") from None
    model.is_fitted_ = bool(config.get("is_fitted", True))
    if config.get("history"):
        model.history_ = History.from_dict(config["history"])
    model.extra_ = config.get("extra", {})
    model.source_ = str(location)         # where it was loaded from (named in prediction files)
    return model


def model_location(directory, where: str) -> Path:
    """The folder or file to read a saved model from: ``directory``, or its ``model/`` sub-folder (a run folder).

    Raises
    ------
    ModelFileError
        ``directory`` does not exist (for a ``.npz``/``.json`` name: neither file exists).
    """
    path = Path(directory)
    if path.suffix in (".npz", ".json"):
        if not path.with_suffix(".npz").exists() and not path.with_suffix(".json").exists():
            raise ModelFileError(f"{where}: {directory} does not exist")
        return path
    if not path.exists():
        raise ModelFileError(f"{where}: {directory} does not exist")
    if path.is_dir() and not (path / "model.json").exists() and (path / "model" / "model.json").exists():
        return path / "model"       # a run folder of `glassformer train`
    return path
