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
