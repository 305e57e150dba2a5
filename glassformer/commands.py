"""``glassformer demo | train | predict``: the well-log commands (registered on the group in cli.py).

Units: depth in the file's depth unit (metres for the Volve files); porosity and other inputs as
the file gives them (PHIF, VSH, SW in v/v); permeability in mD, modelled as log10(mD) with
``--log-target`` (floor 0.001 mD).  Every run writes one folder: ``model/``, ``config.json``,
``metrics.json``, ``predictions.csv`` and ``figures/``.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import click

from .errors import InputError

def _positional_names() -> list:
    """Every ``--positional`` name, from the registry (the list SequenceRegressor's error shows)."""
    from .nn.positional import positional_names

    return positional_names()


def _positional_help() -> str:
    """``--positional``'s help, read from the registry: the names, then what each needs."""
    from .nn.positional import get_spec

    specs = [get_spec(n) for n in _positional_names()]
    needs = [f"'{s.name}' needs --{o}" for s in specs for o in s.cli_options if o in s.required]
    needs += [f"'{s.name}' needs --positions index" for s in specs if s.integer_positions]
    return f"Positional encoding: {', '.join(_positional_names())}. " + "; ".join(needs) + "."


POSITIONAL_HELP = _positional_help()
WAVELENGTHS_HELP = ("Wavelengths W1 W2 ... for --positional wavelengths, in position units (samples with --positions "
                    "index, the file's depth unit, e.g. m, with --positions depth): one sine/cosine pair each")

DEMO_NAMES = ("porosity", "neighbor", "synthetic-wells", "real-wells")   # what `glassformer demo` runs
EXTRA_DEMOS = ("wavelengths", "translate", "shakespeare")                  # run by name only (time budget)
TEXT_DEMOS = ("translate", "shakespeare")                                   # accept --quick


def _interval(text: str, option: str) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in str(text).split(":"))
    except ValueError:
        raise InputError(f"{option} must be TOP:BASE in the file's depth unit (e.g. 3351.6:4300), got {text!r}") \
            from None
    if not (math.isfinite(a) and math.isfinite(b)) or a >= b:
        raise InputError(f"{option} must be TOP:BASE with TOP < BASE, got {text!r}")
    return a, b


@click.command("demo")
@click.argument("name", required=False, type=click.Choice(DEMO_NAMES + EXTRA_DEMOS))
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Output folder (default ./glassformer_runs/<name>; with no NAME, one sub-folder per demo).")
@click.option("--quick", is_flag=True, help="Shorter translate / shakespeare runs (~100 s / ~30 s).")
@click.option("--overwrite", is_flag=True,
              help="Replace the files of existing, non-empty output folders (refused otherwise).")
def demo(name, out, quick, overwrite):
    """Run seed 000's demonstrations and their scale-ups; no NAME runs the first four.

    \b
    porosity         demonstration 1: 7 depths (m), porosity (%) -> permeability (mD),
                     forecast depths 8-14 m under two schemes (~15 s)
    neighbor         demonstration 2: target 2 x porosity at the next depth; attention
                     lag and ablation on 200 held-out sequences (~20 s)
    synthetic-wells  100 synthetic wells (80 train / 20 test), log10 mD metrics
    real-wells       Volve 15/9-F-11 B depth split and across wells (needs ../shared/data)
    wavelengths      positional wavelengths (m) chosen on a validation interval (~40 s)
    translate        English->French on Tatoeba pairs (<= 8 words): BLEU greedy and beam
                     vs copying the source and an untrained model (~3.5 min; --quick ~100 s)
    shakespeare      character-level decoder-only LM on tiny Shakespeare: validation
                     loss and a sample (~3.5 min; --quick ~30 s)
    """
    from .demos import run_demo

    names = [name] if name else list(DEMO_NAMES)
    skipped = set()
    if not name and "real-wells" in names and not _volve_available():
        skipped.add("real-wells")
    folders = {n: Path(out) / n if (out and not name) else Path(out or Path("glassformer_runs") / n)
               for n in names if n not in skipped}
    for n, folder in folders.items():        # every folder is checked before any demo runs
        _check_demo_folder(folder, overwrite=overwrite)
    for n in names:
        if n in skipped:
            click.echo("== demo real-wells skipped: the Volve files are not under the data root "
                       "(set GLASSFORMER_DATA to the folder holding real/; `glassformer demo real-wells` to insist)")
            continue
        folder = folders[n]
        t0 = time.perf_counter()
        click.echo(f"== demo {n} -> {folder}")
        run_demo(n, folder, echo=click.echo, **({"quick": quick} if n in TEXT_DEMOS else {}))
        click.echo(f"== demo {n} done in {time.perf_counter() - t0:.1f} s")


def _check_demo_folder(folder: Path, *, overwrite: bool) -> None:
    """Refuse a demo output folder that is a file, or exists and is not empty (unless ``overwrite``)."""
    if folder.exists() and not folder.is_dir():
        raise InputError(f"demo output {folder}: exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not overwrite:
        raise InputError(f"demo output folder {folder} exists and is not empty; pass --overwrite to replace its "
                         f"files (or --out to write elsewhere)")


class _GreedyCommand(click.Command):
    """A command whose ``--inputs`` (and ``--wavelengths``) take several space-separated values:
    ``--inputs PHIF VSH SW``.

    Click options take a fixed number of values, so the arguments are rewritten to
    ``--inputs PHIF --inputs VSH --inputs SW`` (a ``multiple=True`` option) before parsing.
    """

    greedy = ("--inputs", "--wavelengths")
    examples = {"--inputs": "curve mnemonic, e.g. --inputs PHIF VSH SW",
                "--wavelengths": "wavelength, e.g. --wavelengths 4 16 64"}

    def parse_args(self, ctx, args):
        def value(opt, token):
            # a value, not an option; --wavelengths also takes "-16" (refused later with a clear message)
            return not token.startswith("-") or (opt == "--wavelengths" and _is_number(token))

        out, current, first = [], None, False
        for i, a in enumerate(args):
            if a in self.greedy:
                if i + 1 == len(args) or not value(a, args[i + 1]):
                    raise click.UsageError(f"{a} needs at least one {self.examples[a]}")
                current, first = a, True
                out.append(a)
            elif current is not None and value(current, a):
                out.extend([a] if first else [current, a])
                first = False
            else:
                current = None
                out.append(a)
        return super().parse_args(ctx, out)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _volve_available() -> bool:
    from .data.volve import volve_path
    from .errors import DataFileError

    try:
        for key in ("F-11B", "F-1B", "F-1A"):
            volve_path(key)
    except DataFileError:
        return False
    return True


# --- fault tolerance of `glassformer train` (checkpoints, --resume, signals, divergence) ----------
#: Options that may differ between an interrupted run and its ``--resume`` (they do not change the result).
_RESUME_FREE = ("out", "overwrite", "progress", "resume", "checkpoint_every")


def _run_signature(params: dict) -> dict:
    """The ``train`` options that must match for ``--resume`` (file paths made absolute), JSON-able."""
    sig = {}
    for key, value in params.items():
        if key in _RESUME_FREE:
            continue
        if key in ("data", "test_data"):
            value = [str(Path(v).resolve()) for v in value]
        sig[key] = list(value) if isinstance(value, tuple) else value
    return sig


def _load_resume(resume, params: dict):
    """Read ``--resume DIR`` (a checkpoint folder or a run folder holding ``checkpoint/``) and check it fits.

    Raises
    ------
    ModelFileError
        Unreadable checkpoint, or one not written by ``glassformer train``.
    InputError
        The checkpoint was written with other options (the message lists them).
    """
    from . import io
    from .errors import ModelFileError

    folder = Path(resume)
    if (folder / "checkpoint" / "checkpoint.json").exists() or (folder / "checkpoint" / "checkpoint.npz").exists():
        folder = folder / "checkpoint"
    ck = io.load_checkpoint(folder)
    saved = (ck.config or {}).get("options") if isinstance(ck.config, dict) else None
    if not isinstance(saved, dict):
        raise ModelFileError(f"--resume {resume}: the checkpoint was not written by `glassformer train`")
    mine = _run_signature(params)
    differ = [f"--{k.replace('_', '-')} is {saved.get(k)!r} there, {v!r} here" for k, v in mine.items()
              if saved.get(k) != v]
    if differ:
        raise InputError(f"--resume {resume}: the checkpoint was written with other options "
                         f"({'; '.join(differ)}); rerun with the options of the interrupted run")
    return ck, folder


def _resume_hint(ctx: click.Context, folder) -> str:
    """The command line that resumes this run: its non-default options plus ``--resume folder``."""
    import shlex

    parts = ["glassformer", "train"]
    for param in ctx.command.params:
        if not isinstance(param, click.Option) or param.name in ("resume", "overwrite"):
            continue
        value = ctx.params.get(param.name)
        if param.is_flag:
            if value != param.default:
                parts.append(param.opts[0] if value else param.secondary_opts[0])
            continue
        if value is None or value == () or value == param.default:
            continue
        if param.multiple and param.opts[0] in _GreedyCommand.greedy:
            parts += [param.opts[0], *(str(v) for v in value)]      # --inputs PHIF VSH SW, as documented
            continue
        for v in (value if param.multiple else (value,)):
            parts += [param.opts[0], str(v)]
    parts += ["--resume", str(folder)]
    return " ".join(shlex.quote(p) for p in parts)


def _check_out_folder(out, *, overwrite: bool) -> None:
    """Refuse an existing file or non-empty folder ``--out`` (unless ``overwrite``) without creating it.

    A run that fails on its inputs then leaves no folder behind that would block the corrected rerun.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise InputError(f"--out {out}: folder exists and is not empty; pass --overwrite to replace its files")


def _input_names(inputs) -> list:
    """``--inputs`` values as a list of mnemonics (commas also separate); a usage error for none or a duplicate."""
    names = [m for item in inputs for m in str(item).replace(",", " ").split()]
    if not names:
        raise InputError("--inputs needs at least one curve mnemonic, e.g. --inputs PHIF VSH SW")
    unique = {}
    for m in names:
        unique.setdefault(m.upper(), m)
    if len(unique) < len(names):
        dup = next(m for i, m in enumerate(names) if m.upper() in {x.upper() for x in names[:i]})
        raise click.UsageError(f"--inputs lists {dup} more than once; give each curve once, e.g. "
                               f"--inputs {' '.join(unique.values())}")
    return names


def _positional_options(positional: str, wavelengths, positions: str, window: int, d_model: int | None) -> dict:
    """``positional_options`` for ``--positional`` (checked against --wavelengths and --positions).

    ``d_model=None`` (``compare``, which has no --d-model) skips the width check: the caller sets
    d_model to 2 x the number of wavelengths.
    """
    opts = {}
    if positional == "learned":
        if positions == "depth":
            raise InputError("--positional learned needs --positions index (one learned vector per sample "
                             "index 1..T); depths in metres are not table indices")
        opts = {"max_len": window + 1}
    if wavelengths and positional != "wavelengths":
        raise InputError(f"--wavelengths is used only with --positional wavelengths (got --positional {positional})")
    if positional == "wavelengths":
        if not wavelengths:
            raise InputError("--positional wavelengths needs --wavelengths W1 W2 ... (position units: samples with "
                             "--positions index, the depth unit with --positions depth); d_model must be 2 x their "
                             "count")
        bad = [w for w in wavelengths if not (math.isfinite(w) and w > 0)]
        if bad:
            raise InputError(f"--wavelengths must be finite numbers > 0, got {bad[0]:g}")
        if d_model is not None and d_model != 2 * len(wavelengths):
            raise InputError(f"--positional wavelengths: --d-model ({d_model}) must be 2 x the number of --wavelengths "
                             f"({len(wavelengths)}); use --d-model {2 * len(wavelengths)}")
        opts = {"wavelengths": [float(w) for w in wavelengths]}
    return opts


def _check_training_logs(logs, train_logs, input_names, target, window: int, interval: str) -> None:
    """Check the training interval of every ``--data`` well before anything is fitted.

    Raises
    ------
    CurveNotFoundError
        An input or the target is not in a file (the message lists the available curves).
    DataFileError
        A curve has no valid (non-null) sample in the training interval of a file, or no file has a
        gap-free run of inputs as long as ``--window``.
    """
    import numpy as np

    from .data.windows import contiguous_runs
    from .errors import DataFileError

    longest = []
    for full, g in zip(logs, train_logs):
        where = f"{full.source or full.name}"
        for role, m in [*(("input", m) for m in input_names), ("target", target)]:
            values = np.asarray(g.curve(m), dtype=np.float64)
            if not np.isfinite(values).any():
                raise DataFileError(f"{where}: {role} curve {m} has no valid (non-null) sample in the training "
                                    f"interval {interval} {g.depth_unit} ({len(values)} samples, all null)")
        ok = g.valid_mask(input_names)
        runs = [b - a for a, b in contiguous_runs(ok)]
        longest.append((max(runs, default=0), where))
    best = max(n for n, _ in longest)
    if best < window:
        listing = "; ".join(f"{w}: {n}" for n, w in longest)
        raise DataFileError(f"--window {window}: no gap-free run of inputs {', '.join(input_names)} is that long in "
                            f"the training interval {interval} (longest per file: {listing}); use --window {best} "
                            f"or less" if best >= 2 else
                            f"--window {window}: the training interval {interval} holds no gap-free run of at least "
                            f"2 samples of inputs {', '.join(input_names)} (longest per file: {listing})")


def _keep_last_good(pipe, train_logs, out) -> str:
    """After a divergence: save the pipeline with its last good parameters into ``out/model``.

    The baselines are fitted as :meth:`WellPipeline.fit` does after a successful training, so the
    saved folder works with ``glassformer predict``.  Returns a sentence for the error message.
    """
    import numpy as np

    from .baselines import PorosityPermeabilityTransform, TrainingMean

    phi, k = pipe._porosity_and_target(train_logs)
    pipe.baseline_ppt = PorosityPermeabilityTransform().fit_log10(phi, k) if pipe.log_target else \
        PorosityPermeabilityTransform(floor_mD=pipe.floor_mD).fit(phi, k)
    pipe.baseline_mean = TrainingMean().fit(None, np.concatenate([pipe.target_values(g) for g in train_logs]))
    pipe.model.is_fitted_ = True
    folder = Path(out) / "model"
    pipe.save(folder, overwrite=True)
    history = pipe.model.history_
    untrained = " (the untrained initial weights: no epoch finished)" if history is None or len(history) == 0 else ""
    return (f"The last good model was saved to {folder}{untrained}; "
            f"rerun into the same --out with --overwrite.")


@click.command("train", cls=_GreedyCommand)
@click.option("--data", "data", multiple=True, required=True, type=click.Path(exists=True, dir_okay=False),
              help="Well file (.las or .csv); repeat for several wells. All must share one depth unit.")
@click.option("--inputs", required=True, multiple=True,
              help="Input curve mnemonics, e.g. --inputs PHIF VSH SW (the first is taken as porosity for the "
                   "porosity-permeability baseline).")
@click.option("--target", required=True, help="Target curve mnemonic (permeability, mD), e.g. KLOGH.")
@click.option("--log-target/--no-log-target", default=False, show_default=True,
              help="Model log10(permeability in mD), floor 0.001 mD; metrics are then in log10 mD.")
@click.option("--train-depth", required=True, help="Training interval TOP:BASE (file depth unit, e.g. m).")
@click.option("--test-depth", default=None,
              help="Forecast/test interval TOP:BASE (file depth unit). Without it only training metrics exist.")
@click.option("--test-data", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Separate test well file(s) (whole logs, or --test-depth of them).")
@click.option("--window", default=32, show_default=True, type=click.IntRange(2),
              help="Samples per window T (0.1 m spacing: 32 samples = 3.2 m).")
@click.option("--stride", default=None, type=click.IntRange(1), help="Step between training windows [default T/2].")
@click.option("--epochs", default=30, show_default=True, type=click.IntRange(1), help="Training epochs (max).")
@click.option("--positions", type=click.Choice(["index", "depth"]), default="index", show_default=True,
              help="Positions: sample index inside the window (1..T) or depth (file unit).")
@click.option("--positional", default="sinusoidal", show_default=True, help=POSITIONAL_HELP)
@click.option("--wavelengths", multiple=True, type=float, metavar="W1 W2 ...",
              help=WAVELENGTHS_HELP + "; --d-model must be 2 x their count.")
@click.option("--d-model", default=16, show_default=True, type=click.IntRange(1), help="Model width d_model.")
@click.option("--heads", default=2, show_default=True, type=click.IntRange(1), help="Attention heads.")
@click.option("--layers", default=1, show_default=True, type=click.IntRange(1), help="Encoder layers.")
@click.option("--lr", default=3e-3, show_default=True, type=float, help="Adam learning rate.")
@click.option("--seed", default=42, show_default=True, type=click.IntRange(0),
              help="Random seed (init, shuffling, split); an integer >= 0.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Run folder to write.")
@click.option("--overwrite", is_flag=True, help="Replace the files of an existing, non-empty --out folder.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
@click.option("--checkpoint-every", default=1, show_default=True, type=click.IntRange(1), metavar="N",
              help="Save a resumable checkpoint into OUT/checkpoint every N epochs.")
@click.option("--resume", default=None, type=click.Path(exists=True, file_okay=False), metavar="DIR",
              help="Continue an interrupted run from its checkpoint folder (OUT/checkpoint, or the run folder); "
                   "give the same options as the interrupted run.")
def train(data, inputs, target, log_target, train_depth, test_depth, test_data, window, stride, epochs, positions,
          positional, wavelengths, d_model, heads, layers, lr, seed, out, overwrite, progress, checkpoint_every,
          resume):
    """Train a transformer on well logs and report it beside the baselines.

    Scaling is fitted on the training interval only; NaN targets (gaps, LAS nulls) are masked out
    of the loss; windows never cross gaps in the inputs.  Metrics (RMSE, MAE in the target's
    units, R²) are for the transformer, the porosity-permeability transform (linear regression of
    log10 k on porosity) and the training mean, on the same split.

    \b
    Faults: a checkpoint is written to OUT/checkpoint every --checkpoint-every epochs. Ctrl-C
    (SIGINT) or SIGTERM saves a checkpoint, prints one line with the command that resumes, and
    exits with status 130 (SIGINT) or 143 (SIGTERM); --resume continues to the same parameters as
    an uninterrupted run. A diverging run exits with status 2 and keeps its last good model in
    OUT/model.
    """
    from .data.volve import ATTRIBUTION
    from .data.wells import common_depth_unit, read_well
    from .demos.common import WellPipeline, run_well_experiment
    from .demos.compare import forecast_logs
    from .errors import DivergenceError
    from .models import SequenceRegressor
    from .training import ResumeFrom, SaveCheckpoint, TrainingInterrupted

    ctx = click.get_current_context()
    checkpoint_dir = Path(out) / "checkpoint"
    fault_callbacks = [SaveCheckpoint(checkpoint_dir, every=checkpoint_every,
                                      config={"command": "train", "options": _run_signature(ctx.params)})]
    resuming_here = False
    if resume is not None:
        ck, ck_folder = _load_resume(resume, ctx.params)
        fault_callbacks.append(ResumeFrom(ck))
        resuming_here = Path(ck_folder).resolve().parent == Path(out).resolve()
    _check_out_folder(out, overwrite=overwrite or resuming_here)   # created later, once the inputs are valid
    input_names = _input_names(inputs)
    if str(target).strip().upper() in {m.upper() for m in input_names}:
        raise InputError(f"--target {target} is also one of --inputs {' '.join(input_names)}; the model would "
                         "see the answer (choose inputs without the target)")
    top, base = _interval(train_depth, "--train-depth")
    logs = [read_well(p) for p in data]
    common_depth_unit(logs)                       # DepthError naming each file's unit when they differ
    train_logs = [g.interval(top, base) for g in logs]
    _check_training_logs(logs, train_logs, input_names, target, window, train_depth)
    tdepth = _interval(test_depth, "--test-depth") if test_depth else None
    test_wells = []
    for p in test_data:
        test_wells.append(read_well(p))
        common_depth_unit([*logs, test_wells[-1]])
    test_logs, boundary = forecast_logs(logs, (top, base), tdepth, test_wells,
                                        labels=(f"--train-depth {train_depth}", f"--test-depth {test_depth}"))
    if not test_logs:
        test_logs = train_logs
        click.echo("note: no --test-depth / --test-data given: the 'test' metrics are on the training interval")
    pos_options = _positional_options(positional, wavelengths, positions, window, d_model)
    if not (math.isfinite(lr) and lr > 0):
        raise InputError(f"--lr: the learning rate must be a finite number > 0, got {lr}")
    model_params = dict(d_model=d_model, num_heads=heads, d_ff=2 * d_model, num_layers=layers,
                        positional=positional, positional_options=pos_options, attn_out_proj=True, init="torch",
                        optimizer="adam", lr=lr, batch_size=32, grad_clip=1.0, epochs=epochs,
                        validation_fraction=0.1, early_stopping_patience=5, random_state=seed, progress=progress)
    SequenceRegressor(**model_params, n_features=len(input_names))   # bad model options fail before --out exists

    class _FaultTolerantPipeline(WellPipeline):
        # run_well_experiment calls fit(train_logs): add the checkpoint/resume callbacks and keep the
        # last good model when training diverges.
        def fit(self, train_logs, *, callbacks=()):
            try:
                return super().fit(train_logs, callbacks=(*callbacks, *fault_callbacks))
            except DivergenceError as exc:
                kept = _keep_last_good(self, list(train_logs), out)
                raise DivergenceError(f"{exc} {kept}", epoch=exc.epoch, where=exc.where) from None

    pipe = _FaultTolerantPipeline(input_names, target, log_target=log_target, window=window, stride=stride,
                                  positions=positions, model_params=model_params)
    volve = any("volve" in (g.source + g.name).lower() or "15/9" in g.name or "15_9" in g.source for g in logs)
    try:
        run_well_experiment(out, train_logs, test_logs, pipe, title="glassformer train", echo=click.echo,
                            boundary=boundary, attribution=ATTRIBUTION if volve else None, overwrite=True,
                            config={"command": "train", "data": [str(p) for p in data],
                                    "test_data": [str(p) for p in test_data], "train_depth": [top, base],
                                    "test_depth": test_depth})
    except TrainingInterrupted as exc:
        click.echo(f"glassformer: interrupted by {exc.signal_name} {exc.where}; checkpoint saved to "
                   f"{exc.checkpoint}; resume with: {_resume_hint(ctx, exc.checkpoint)}", err=True)
        ctx.exit(exc.exit_status)
    click.echo(f"Wrote {out}")


@click.command("predict")
@click.option("--model", "model_dir", required=True, type=click.Path(exists=True, file_okay=False),
              help="A run folder written by `glassformer train` (or its model/ sub-folder).")
@click.option("--data", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Well file (.las or .csv) holding the model's input curves.")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Output file: .csv (depth + prediction columns) or .las (input curves + prediction).")
@click.option("--depth", "depth_range", default=None, help="Only predict TOP:BASE (file depth unit).")
@click.option("--overwrite", is_flag=True, help="Replace --out if it exists (never replaced otherwise).")
def predict(model_dir, data, out, depth_range, overwrite):
    """Predict the target log of a well with a trained model.

    Writes one prediction per depth sample (NaN where an input is missing), in mD
    (and log10 mD when the model was trained with --log-target).
    """
    import numpy as np
    import pandas as pd

    from . import io
    from .data.wells import read_well
    from .demos.common import WellPipeline

    if Path(out).resolve() == Path(data).resolve() or (Path(out).exists() and Path(out).samefile(data)):
        raise InputError(f"--out {out} would replace the input well --data {data}; choose another output file")
    if Path(out).exists() and not overwrite:
        raise InputError(f"--out {out} already exists; pass --overwrite to replace it")
    pipe = WellPipeline.load(model_dir)
    log = read_well(data)
    if depth_range:
        log = log.interval(*_interval(depth_range, "--depth"))
    pred = pipe.predict_log(log)
    name = f"{pipe.target}_PRED"
    cols = {"DEPTH": log.depth}
    units = {"DEPTH": log.depth_unit}
    if pipe.log_target:
        cols[f"{name}_LOG10"] = pred
        units[f"{name}_LOG10"] = "log10 mD"
        cols[name] = np.power(10.0, pred)
    else:
        cols[name] = pred
    units[name] = "mD"
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix == ".csv":
        io.atomic_write_text(out, pd.DataFrame(cols).to_csv(index=False, float_format="%.9g"))
    elif suffix == ".las":
        _write_las(out, log, cols, units, pipe)
    else:
        raise InputError(f"--out {out}: use a .csv or .las file name")
    n_ok = int(np.isfinite(pred).sum())
    click.echo(f"Wrote {out}: {n_ok} of {len(pred)} depths predicted ({name}, mD)")


def _write_las(path: Path, log, cols: dict, units: dict, pipe) -> None:
    """Write the prediction as LAS 2.0: the input's header and curves, then the prediction curves.

    A LAS input is read again (header only) so its ~Well items (WELL, COMP, FLD, LOC, ..., NULL),
    ~Params, ~Other and its index and input curve mnemonics, units and descriptions carry over; a
    CSV input gets WELL = the log's name, a DEPT index in the log's depth unit and NULL -999.25.
    NaN (missing input, no prediction) is written as that NULL.
    """
    import copy
    import io as _io
    import logging

    import lasio
    import numpy as np

    from . import io

    las = lasio.LASFile()
    header = None
    if Path(log.source).suffix.lower() == ".las" and Path(log.source).is_file():
        quiet = logging.getLogger("lasio")
        level = quiet.level
        quiet.setLevel(logging.ERROR)          # read_well already reported what matters about this file
        try:
            header = lasio.read(log.source, ignore_data=True)
        except Exception:          # read_well read it a moment ago; if lasio now fails, keep the CSV layout
            header = None
        finally:
            quiet.setLevel(level)
    input_curves = {}
    if header is not None:
        for section in ("Well", "Parameter", "Other"):
            if section in header.sections:
                las.sections[section] = copy.deepcopy(header.sections[section])
        index = header.curves[0]
        index_item = (index.mnemonic, index.unit, index.descr)
        input_curves = {c.mnemonic.upper(): c for c in header.curves[1:]}
    else:
        las.well["WELL"].value = log.name
        index_item = ("DEPT", log.depth_unit.upper(), "Depth")
    null = float("nan")        # the input's NULL; -999.25 (not lasio's -9999.25) for CSV or none declared
    if header is not None and "NULL" in las.well:
        try:
            null = float(las.well["NULL"].value)
        except (TypeError, ValueError):
            pass
    if not np.isfinite(null):
        null = -999.25
    if "NULL" in las.well:
        las.well["NULL"].value = null
    else:
        las.well["NULL"] = lasio.HeaderItem("NULL", "", null, "Null value")
    las.append_curve(index_item[0], np.asarray(log.depth, dtype=float), unit=index_item[1], descr=index_item[2])
    for m in pipe.inputs:
        item = input_curves.get(m.upper())
        unit = item.unit if item is not None else log.units.get(m, "")
        descr = item.descr if item is not None else (log.descriptions.get(m) or "model input")
        las.append_curve(item.mnemonic if item is not None else m, np.asarray(log.curve(m), dtype=float),
                         unit=unit, descr=descr)
    source = getattr(pipe.model, "source_", None)
    # LAS 2.0 ends a value at the line's last colon, so the description holds none.
    model_name = (str(source) if source else type(pipe.model).__name__).replace(":", "")
    for k, v in cols.items():
        if k != "DEPTH":
            # LAS units end at the first space, so "log10 mD" is written as log10(mD).
            unit = units.get(k, "").replace("log10 mD", "log10(mD)")
            las.append_curve(k, np.asarray(v, dtype=float), unit=unit,
                             descr=f"glassformer prediction (model {model_name})")
    buf = _io.StringIO()
    las.write(buf, version=2.0, wrap=False, fmt="%.9g")
    io.atomic_write_text(path, buf.getvalue())


def register(group) -> None:
    """Add ``demo``, ``train``, ``predict`` and ``compare`` to the click ``group``."""
    for cmd in (demo, train, predict, compare):
        group.add_command(cmd)


@click.command("compare", cls=_GreedyCommand)
@click.option("--demo", "demo_name", type=click.Choice(["porosity", "synthetic-wells", "real-wells"]), default=None,
              help="Compare on a demonstration's data instead of --data: porosity (7 + 7 depths), "
                   "synthetic-wells (100 wells) or real-wells (both Volve splits).")
@click.option("--data", "data", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Well file (.las or .csv); repeat for several wells.")
@click.option("--inputs", multiple=True, help="Input curve mnemonics, e.g. --inputs PHIF VSH SW (first = porosity).")
@click.option("--target", default=None, help="Target curve mnemonic (permeability, mD), e.g. KLOGH.")
@click.option("--log-target/--no-log-target", default=False, show_default=True,
              help="Model log10(permeability in mD), floor 0.001 mD; metrics are then in log10 mD.")
@click.option("--train-depth", default=None, help="Training interval TOP:BASE (file depth unit, e.g. m).")
@click.option("--test-depth", default=None, help="Forecast/test interval TOP:BASE (file depth unit).")
@click.option("--test-data", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Separate test well file(s) (whole logs, or --test-depth of them).")
@click.option("--window", default=32, show_default=True, type=click.IntRange(2), help="Samples per window T.")
@click.option("--stride", default=None, type=click.IntRange(1), help="Step between training windows [default T/2].")
@click.option("--epochs", default=None, type=click.IntRange(1),
              help="Maximum epochs of both networks [30 on --data; the demo's own with --demo].")
@click.option("--hidden-size", default=16, show_default=True, type=click.IntRange(1),
              help="LSTM hidden size per direction (bidirectional).")
@click.option("--positional", default="sinusoidal", show_default=True,
              help=f"Transformer positional encoding (--data only; positions are sample indices 1..T): "
                   f"{', '.join(_positional_names())}. 'wavelengths' needs --wavelengths.")
@click.option("--wavelengths", multiple=True, type=float, metavar="W1 W2 ...",
              help="Wavelengths W1 W2 ... for --positional wavelengths, in samples (compare's positions are sample "
                   "indices): one sine/cosine pair each; the transformer's d_model becomes 2 x their count.")
@click.option("--seeds", "n_seeds", default=None, type=click.IntRange(1),
              help="Number of seeds (42, 0, 1, ...); every network is retrained per seed and the table "
                   "reports mean ± sd [1 on --data and real-wells; 3 for porosity and synthetic-wells].")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Run folder to write.")
@click.option("--overwrite", is_flag=True, help="Replace the files of an existing, non-empty --out folder.")
@click.option("--progress/--no-progress", default=False, show_default=True, help="Progress bars on stderr.")
def compare(demo_name, data, inputs, target, log_target, train_depth, test_depth, test_data, window, stride, epochs,
            hidden_size, positional, wavelengths, n_seeds, out, overwrite, progress):
    """Compare the transformer, a bidirectional LSTM, the porosity-permeability transform and the mean.

    All four see the same split, scaling and windows; both networks use the same training loop and
    the same seeds.  Writes a run folder whose metrics.json and report.html hold the table (RMSE,
    MAE, R², parameters, fit time in s; mean ± sd over --seeds) and whose
    figures/prediction_vs_depth.png shows every model against depth.
    """
    from .demos.compare import compare_demo, compare_wells, load_split, seed_list

    _check_out_folder(out, overwrite=overwrite)   # created once the inputs are valid
    if demo_name:
        if data:
            raise InputError("give either --demo or --data, not both")
        if positional != "sinusoidal" or wavelengths:
            raise InputError("--positional / --wavelengths apply to --data runs; a --demo uses its own model")
        compare_demo(demo_name, out, seeds=seed_list(n_seeds) if n_seeds else None, epochs=epochs,
                     echo=click.echo)
        click.echo(f"Comparison written to {out} (metrics.json, report.html)")
        return
    missing = [name for name, v in (("--data", data), ("--inputs", inputs), ("--target", target),
                                    ("--train-depth", train_depth)) if not v]
    if missing:
        raise InputError(f"compare needs {', '.join(missing)} (or --demo NAME)")
    from .data.volve import ATTRIBUTION

    input_names = _input_names(inputs)
    pos_options = _positional_options(positional, wavelengths, "index", window, None)
    top, base = _interval(train_depth, "--train-depth")
    tdepth = _interval(test_depth, "--test-depth") if test_depth else None
    train_logs, test_logs, boundary = load_split(data, (top, base), tdepth, test_data,
                                                 labels=(f"--train-depth {train_depth}", f"--test-depth {test_depth}"))
    if test_logs is train_logs:
        click.echo("note: no --test-depth / --test-data given: the 'test' metrics are on the training interval")
    volve = any("volve" in (g.source + g.name).lower() or "15/9" in g.name or "15_9" in g.source for g in train_logs)
    compare_wells(out, train_logs, test_logs, inputs=input_names, target=target, log_target=log_target,
                  window=window, stride=stride, epochs=epochs or 30, seeds=seed_list(n_seeds or 1),
                  hidden_size=hidden_size, boundary=boundary, attribution=ATTRIBUTION if volve else None,
                  positional=positional, positional_options=pos_options, progress=progress, echo=click.echo,
                  config={"data": [str(p) for p in data], "test_data": [str(p) for p in test_data],
                          "train_depth": [top, base], "test_depth": test_depth})
    click.echo(f"Wrote {out}")

