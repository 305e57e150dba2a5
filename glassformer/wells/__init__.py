"""The main job: permeability (mD) from porosity and other logs along depth, on real wells.

=====================  ========================================================================
module                 what it holds
=====================  ========================================================================
``model``              :class:`WellModel`: scale, window, fit, predict a whole log, save / load
``baselines``          the field's porosity-permeability transform and the training mean
``evaluation``         metrics per split (RMSE, MAE, R², n) and their spread over seeds
``splits``             training / test intervals of wells, and the checks made before fitting
``experiment``         a complete run folder: fit per seed, score beside the baselines, figures
``tables``             the plain-text tables the CLI prints
``intervals``          P10/P50/P90 from an ensemble's spread, coverage, split-conformal calibration
``ensemble``           deep ensembles: K members from different seeds, pretraining + fine-tuning
``trees``              random forest and gradient boosting on depth-context features
``core_split``         core plugs merged onto a log as a sparse target; train/validation/test cores
``core_scoring``       baselines at core depths, metrics at plug depths only
``core_experiment``    a complete core run folder (``glassformer train --core``)
``core_report``        coverage before and after calibration, the verdict in words, the figures
``ensemble_experiment``  a deep ensemble on a log target, calibrated, scored on blind wells
``prediction``         one well predicted from a saved model into a LAS/CSV file (:func:`predict_file`)
``batch``              many wells on any engine: one output each, a manifest, ``--resume``
``manifest``           the batch's manifest.csv / manifest.json, written as wells finish
``seeds``              one seed's fit as an engine task (``compare --seeds`` in parallel)
``sweep``              a grid of settings chosen on validation data, then scored once on test
=====================  ========================================================================

``glassformer train``, ``predict``, ``compare``, ``sweep`` and the well demos are thin layers over
this package; a Python user does the same with :class:`WellModel` and :func:`run_well_experiment`.
"""

from .baselines import PorosityPermeabilityTransform, TrainingMean
from .core_experiment import run_core_experiment
from .core_split import CoreSplit, CoreWell, prepare_core_well, split_cores
from .ensemble import DeepEnsemble, fit_ensemble, fit_member, fit_pretrained_ensemble
from .ensemble_experiment import run_ensemble_experiment
from .intervals import ConformalScale, coverage_curve, ensemble_quantiles, interval_coverage
from .evaluation import evaluate_split, regression_metrics, summarise_runs
from .experiment import compare_wells, run_well_experiment, seed_list, with_seed
from .model import BASELINE_NAMES, WellModel
from .splits import check_training_logs, forecast_logs, load_split
from .tables import format_comparison_table, format_metrics_table

__all__ = [
    "BASELINE_NAMES", "PorosityPermeabilityTransform", "TrainingMean", "WellModel", "check_training_logs",
    "compare_wells", "evaluate_split", "forecast_logs", "format_comparison_table", "format_metrics_table",
    "load_split", "regression_metrics", "run_well_experiment", "seed_list", "summarise_runs", "with_seed",
]

# core plugs as targets, deep ensembles, P10/P50/P90 and their coverage
__all__ += [
    "ConformalScale", "CoreSplit", "CoreWell", "DeepEnsemble", "coverage_curve", "ensemble_quantiles", "fit_ensemble",
    "fit_member", "fit_pretrained_ensemble", "interval_coverage", "prepare_core_well", "run_core_experiment",
    "run_ensemble_experiment", "split_cores",
]
