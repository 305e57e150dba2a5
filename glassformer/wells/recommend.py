"""Which model a training run recommends: the lowest RMSE on validation data no model was fitted on.

The networks stop early on validation data they never train on (the deepest 10 % of each training
interval, or validation wells); the baselines are fitted on the whole training intervals, so on
those depth blocks they would be scored in-sample.  For the choice, the baselines are refitted on
the training intervals less the validation blocks -- every model then sees the same data and is
scored on the same unseen depths -- and the model with the lowest validation RMSE is recommended.
The saved baselines stay those fitted on the whole intervals (what ``predict --use`` writes).
Choosing on a validation set and keeping the test set for the final score follows Hastie, Tibshirani
and Friedman (2009), The Elements of Statistical Learning, section 7.2.
"""

from __future__ import annotations

import copy
import math
import shlex

from .evaluation import evaluate_split
from .splits import choose_validation

__all__ = ["recommend_model", "recommendation"]

#: The models that stop early on the validation data the recommendation is scored on.
_NETWORKS = ("transformer", "LSTM")


def recommend_model(wm, train_logs, val_logs=(), unit: str = "log10 mD", run_folder=None) -> dict:
    """The recommendation of a fitted well model, as plain data.

    Parameters
    ----------
    wm : fitted :class:`~glassformer.wells.WellModel`
    train_logs : the training logs it was fitted on (cut to their intervals).
    val_logs : the validation logs it was given, if any (else ``wm.validation`` chose the blocks).
    unit : the RMSE's unit, for the sentence.
    run_folder : the run folder (``--out``) the sentence's predict command names; a placeholder when None.

    Returns
    -------
    dict
        ``{"model": name or None, "validation_rmse": {name: rmse}, "validation": what was used,
        "text": one sentence}``; ``model`` is None when there is no validation data.
    """
    fit_logs, held, how = choose_validation(train_logs, val_logs, wm.validation, wm.validation_fraction, wm.window)
    if not held:
        return {"model": None, "validation_rmse": {}, "validation": how["method"],
                "text": "No model is recommended: there is no validation data to choose on (validation: "
                        f"{how['method']})."}
    scored = wm
    if not val_logs:                                  # the baselines saw the blocks: refit them without
        scored = copy.copy(wm)
        scored.fit_baselines(fit_logs)
    _, metrics = evaluate_split(scored, held, "validation")
    return recommendation({name: m["rmse"] for name, m in metrics.items()}, how["method"], unit, run_folder)


def recommendation(rmse: dict, validation: str, unit: str = "log10 mD", run_folder=None) -> dict:
    """The model of lowest validation RMSE among ``rmse`` (name -> RMSE or None), in words; the predict
    command it gives names ``run_folder`` (shell-quoted) when given.

    Returns ``{"model", "validation_rmse", "validation", "text"}`` as :func:`recommend_model`.
    """
    rmse = {name: float(v) for name, v in rmse.items() if isinstance(v, (int, float)) and math.isfinite(v)}
    if not rmse:
        return {"model": None, "validation_rmse": {}, "validation": validation,
                "text": "No model is recommended: no model has a validation RMSE."}
    best = min(rmse, key=rmse.get)
    folder = shlex.quote(str(run_folder)) if run_folder is not None else "<this run's folder>"
    others = sorted((v, n) for n, v in rmse.items() if n != best)
    runner = f"; next, the {others[0][1]} with {others[0][0]:.3f}" if others else ""
    text = (f"Recommended model: the {best}, with the lowest RMSE on the validation data ({rmse[best]:.3f} {unit}"
            f"{runner}); validation: {validation}, which no model was fitted on for this choice (the networks "
            "stopped early on it, so their scores there lean optimistic). "
            f"Write its curve with: glassformer predict --model {folder} --data WELL --out "
            f"WELL_pred.las --use \"{best}\".")
    if best in _NETWORKS or "blend" in best:     # chosen where it stopped early: the case that leans its way
        text += (" Before relying on a network (or the blend) chosen here, check the choice on wells no model "
                 "was tuned on: glassformer cv --recommend.")
    return {"model": best, "validation_rmse": rmse, "validation": validation, "text": text}
