"""The main job: permeability (mD) from porosity and other logs along depth, on real wells.

=====================  ========================================================================
module                 what it holds
=====================  ========================================================================
``model``              :class:`WellModel`, a scikit-learn estimator whose specification is ``get_params()``
``baselines``          the one registry of baselines (transform, mean, trees) and the 50/50 blend
``tree_baselines``     tree ensembles on whole logs, with and without rolling depth context (skops files)
``recommend``          the model a training run recommends: lowest RMSE on unseen validation data
``evaluation``         metrics per split and per well (RMSE, MAE, R², n), their spread over seeds
``splits``             training / test intervals of wells, validation blocks, checks before fitting
``dataset``            several wells, each with its role and interval (options or a manifest file)
``checks``             units, depth unit, sample step and training ranges checked before predicting
``scale_checks``       porosity-like curves as a fraction (v/v) or in percent: refused, or converted
``experiment``         train and compare as one experiment: a seed per task, scored beside the baselines
``train_job``          the train request checked, planned and run (``--resume`` checked too)
``compare_job``        the compare request checked, planned and run
``option_values``      curve lists and positional-encoding options as a request gives them
``cv``                 blind-well folds over whole wells (leave one well out, grouped K-fold): one task per fold
``cv_experiment``      cross-validation as an experiment: its request, its run folder (``glassformer cv``)
``tables``             the plain-text tables the CLI prints
``intervals``          P10/P50/P90 from an ensemble's spread, coverage, split-conformal calibration
``uncertainty``        interval width and score, the calibration chosen on validation, quantile baseline
``ensemble``           deep ensembles: K members from different seeds, pretraining + fine-tuning
``plugs_split``        core plugs merged onto a log as a sparse target; train/validation/test cores
``plugs_scoring``      baselines at core depths, metrics at plug depths only
``plugs_experiment``   a run on core plugs as an experiment (``glassformer train --core``)
``plugs_report``       coverage before and after calibration, the verdict in words, the figures
``plugs_uncertainty``  a run's intervals on core plugs: calibration chosen, scores per core run and depth zone
``plugs_match``        per-run depth shifts on their own (``glassformer core-match``), read back
``plugs_request``      ``train --core`` / ``--ensemble``: which options go together, reading, the run
``ensemble_experiment``  a deep ensemble on a log target, calibrated, scored on blind wells
``predictor``          a saved model loaded once: the model it predicts with (its name) and its identity
``prediction``         one well predicted with it into a LAS/CSV file (:func:`predict_well`)
``batch``              many wells on any engine: one output each, a manifest, ``--resume``
``manifest``           the batch's manifest.csv / manifest.json, written as wells finish
``predict_request``    ``glassformer predict``'s request, checked and run: one well or a batch
``seeds``              one seed's fit as an engine task (the one loop over seeds of train and compare)
``sweep``              a grid of settings chosen on validation data, then scored once on test
``sweep_settings``     the grid of transformer settings, and one setting's fit as an engine task
``sweep_request``      ``glassformer sweep``'s request: training, validation and test parts, checked
=====================  ========================================================================

``glassformer train``, ``predict``, ``compare``, ``cv``, ``sweep`` and the well demos are thin layers
over this package; a Python user does the same with :class:`WellModel` and :func:`run_well_experiment`.
"""

from .baselines import PorosityPermeabilityTransform, TrainingMean
from .checks import InputCheck, check_inputs, training_record
from .dataset import WellDataset, WellEntry, build_dataset, read_manifest
from .ensemble import DeepEnsemble, fit_ensemble, fit_member, fit_pretrained_ensemble
from .ensemble_experiment import EnsembleExperiment, run_ensemble_experiment
from .intervals import ConformalScale, coverage_curve, ensemble_quantiles, interval_coverage
from .evaluation import evaluate_split, metrics_by_well, regression_metrics, summarise_runs
from .experiment import compare_wells, run_well_experiment, seed_list, with_seed
from .model import BASELINE_NAMES, WellModel
from .plugs_experiment import PlugsExperiment, run_plugs_experiment
from .plugs_split import CoredWell, PlugSplit, prepare_cored_well, split_plugs
from .splits import check_training_logs, choose_validation, deepest_blocks, forecast_logs
from .tables import format_comparison_table, format_per_well_table, verdict
from .tree_baselines import TREE_BASELINE_NAMES, TreeBaseline, rolling_context

__all__ = [
    "BASELINE_NAMES", "InputCheck", "PorosityPermeabilityTransform", "TREE_BASELINE_NAMES", "TrainingMean",
    "TreeBaseline", "WellDataset", "WellEntry", "WellModel", "build_dataset", "check_inputs", "check_training_logs",
    "choose_validation", "compare_wells", "deepest_blocks", "evaluate_split", "forecast_logs",
    "format_comparison_table", "format_per_well_table", "metrics_by_well",
    "read_manifest", "regression_metrics", "rolling_context", "run_well_experiment", "seed_list", "summarise_runs",
    "training_record", "verdict", "with_seed",
]

# core plugs as targets, deep ensembles, P10/P50/P90 and their coverage
__all__ += [
    "ConformalScale", "CoredWell", "DeepEnsemble", "EnsembleExperiment", "PlugSplit", "PlugsExperiment",
    "coverage_curve", "ensemble_quantiles", "fit_ensemble", "fit_member", "fit_pretrained_ensemble",
    "interval_coverage", "prepare_cored_well", "run_ensemble_experiment", "run_plugs_experiment", "split_plugs",
]
