"""Names in glassformer/ that nothing in the package calls, on purpose: vulture reads this file as
code that uses them (it is parsed, never run).  tests/architecture/test_dead_code.py fails on any
unused name not listed here; add a name only with the reason it has no caller in the package.

    vulture glassformer tools/vulture_whitelist.py --min-confidence 60
"""

# --- Python and Jupyter call these by name -----------------------------------------------------
__getattr__         # glassformer/__init__.py: PEP 562, ``glassformer.WellModel`` imported on first access
_._repr_html_       # Jupyter shows an estimator and a trace as HTML through this method
_.__doc__           # glassformer/nn/tiers.py: help() shows each dispatching kernel's own docstring

# --- the trainer calls a callback's hooks by name (glassformer.train.callbacks.hook_table) --------
_.on_train_begin
_.on_epoch_begin
_.on_before_update
_.on_step_error
_.on_batch_end
_.on_epoch_losses
_.on_epoch_end
_.on_train_end
_.teardown

# --- fitted attributes and record fields, read by users (scikit-learn's trailing underscore) ------
_.data_min_         # MinMaxScaler: per-feature minimum seen in fit
_.data_max_         # MinMaxScaler: per-feature maximum seen in fit
_.std_              # StandardScaler: per-feature standard deviation seen in fit
_.format_version    # LoadedModel: the file format version a model was read from
_.error_type        # TaskOutcome: the exception class of a failed task, for reports
_.urls              # BugReport: where a published case comes from
_.valid_m           # VolveWell: where porosity and permeability are both present (m)
_.plug_sample       # PlugsOnLog: which plug each merged sample comes from
_.description       # PositionalSpec: what an encoding is, in words, for a user reading REGISTRY

# --- public API that users call and the package itself does not ----------------------------------
to_torch            # glassformer.interop: a model to PyTorch (README, tests/interop)
from_torch          # glassformer.interop: and back
plot_prediction     # glassformer.plots: observed vs predicted log (notebooks/01)
plot_trace_attention  # glassformer.plots: a trace's attention maps (notebooks/01, 03)
chapter_source      # glassformer.selftest.published: the chapter's reference (notebooks/01, 02)
bug_reports         # glassformer.selftest.published: every published case (the tests compare them all)
EXIT_USAGE          # glassformer.wells.batch: names predict's exit status 2 beside 0 and 3 (cli.main returns it)
run_batch           # glassformer.wells.batch: many wells in one call (README, benchmarks/field_scale.py)
padding_mask        # glassformer.nn: PyTorch's key_padding_mask, built from sequence lengths
get_positional_encoding  # glassformer.nn.positional: an additive encoding by name (build_positional's sibling)
clip_grad_norm      # glassformer.train: torch.nn.utils.clip_grad_norm_ over Parameters
ConstantLR          # glassformer.train.schedules: a schedule for the Scheduler below
Scheduler           # glassformer.train.schedules: drives optimizer.lr in a loop of the user's own
_.detokenize        # WordTokenizer: token strings back to text
_.has_grads         # Trace: whether it holds the backward pass
_.backward_steps    # Trace: the gradients in the order backward computes them (README)
chapter_model_backward  # glassformer.nn.reference: the chapter's equations, read by students (tests check
mse_backward        #   them against the fast tier); the trainer runs the fast kernels
_.token_to_id       # tokenizers: the id of one token
_.decode_batch      # tokenizers: decode every row of a batch
fit_ensemble        # glassformer.wells: a deep ensemble in one call (the runs use its tasks: member_tasks)
fit_pretrained_ensemble  # glassformer.wells: the same, pretrained on a log-derived curve and fine-tuned
run_folds           # glassformer.wells.cv: the folds alone, without a run folder (notebooks/03)
run_sweep           # glassformer.wells.sweep: a sweep in two steps from a script, the choice first ...
finish_sweep        #   ... then the test score (tests/wells/test_sweep.py)
score_chosen        # glassformer.wells.sweep: the chosen setting's test score alone
# The request objects of the command line, while the commands move onto them (each line goes when its use lands).
