"""The title and introduction of a report: what was run, in the words of the chapter and of the field.

The chapter's demonstrations are named as the chapter names them ("Demonstration 1: seven
depths"); a well run names its wells, their depth intervals, the input logs and the target.
Everything is read from the run folder: ``title`` and ``description`` in metrics.json or
config.json win; otherwise ``config["demo"]`` picks a text from :data:`DEMOS`.
"""

from __future__ import annotations

from collections.abc import Mapping

from .run import RunFolder
from .tables import esc

#: Title and one-paragraph introduction of each demonstration, by ``config["demo"]``.
DEMOS = {
    "porosity": (
        "Demonstration 1: seven depths",
        "The chapter's first demonstration (Pyrcz 2024, \u201cTransformers\u201d): a one-layer transformer "
        "(d_model 4, one head) learns permeability (mD) from porosity (%) at seven depths, 1 to 7 m, then "
        "forecasts permeability at depths 8 to 14 m, where none was measured. An LSTM of the same size, the "
        "porosity-permeability transform and the training mean are fitted to the same seven points."),
    "neighbor": (
        "Demonstration 2: the next depth",
        "The chapter's second demonstration (Pyrcz 2024, \u201cTransformers\u201d): the target at each depth "
        "is twice the porosity at the next depth, so a model has to look at its neighbour. 1,000 synthetic "
        "sequences of seven porosities: 800 to train, 200 held out. The learned attention is then replaced by "
        "uniform and identity weights to measure what it contributes."),
    "synthetic-wells": (
        "Synthetic wells",
        "Permeability (log10 mD) from porosity and shale volume (v/v) along synthetic wells of known, seeded "
        "geology: whole wells to train and other whole wells to test, every model on the same windows and "
        "scaling."),
    "real-wells": (
        "Real wells: the Volve field",
        "Permeability (KLOGH, mD, modelled as log10) from porosity PHIF, shale volume VSH and water "
        "saturation SW (v/v) in wells of the Volve field, North Sea."),
    "wavelengths": (
        "Positional wavelengths chosen by validation",
        "Which wavelengths (m) of the positional encoding suit a log with a cyclic trend: candidate sets "
        "are compared on a validation interval, and only the chosen set is scored on the test interval."),
    "translate": (
        "English to French translation",
        "An encoder-decoder transformer trained on short English-French sentence pairs, scored with BLEU "
        "against copying the source sentence and the untrained model."),
    "shakespeare": (
        "A character-level language model on Shakespeare",
        "A decoder-only transformer that predicts the next character of Shakespeare's plays, scored by its "
        "validation loss against the character frequencies alone."),
}


def title_of(run: RunFolder) -> str:
    """metrics/config ``title``, else the demonstration's name, else ``Run <folder name>``."""
    title = run.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    demo = DEMOS.get(run.demo or "")
    return demo[0] if demo else f"Run {run.name}"


def _interval(name: str, top, base, unit) -> str:
    """``"W1 3351.6–4300 ft"``: the interval in the well's own depth unit (m when the run did not record one)."""
    return f"{name} {float(top):g}\u2013{float(base):g} {esc(unit or 'm')}"


def _well_text(w) -> str:
    if not isinstance(w, Mapping):
        return esc(w)
    name = esc(w.get("name", "?"))
    if w.get("top") is not None and w.get("base") is not None:
        return _interval(name, w["top"], w["base"], w.get("depth_unit"))
    return name


def _listed(wells) -> str:
    return ", ".join(_well_text(w) for w in wells[:6]) + (f" and {len(wells) - 6} more" if len(wells) > 6 else "")


def _validation_blocks(config) -> str:
    """``"W1 4200–4300 ft, W2 ..."``: the depth blocks held out of the networks' training for early stopping."""
    validation = config.get("validation")
    blocks = validation.get("blocks") if isinstance(validation, Mapping) else None
    if not isinstance(blocks, (list, tuple)):
        return ""
    return ", ".join(_interval(esc(b.get("well", "?")), b["top"], b["base"], b.get("depth_unit"))
                     for b in blocks if isinstance(b, Mapping) and b.get("top") is not None
                     and b.get("base") is not None)


def wells_sentence(config) -> str:
    """"Trained on W1 3351.6–4300 m; tested on W2 ..." from config's train_wells/validation_wells/test_wells
    (or ""), each interval in its well's own depth unit.

    The validation blocks (config["validation"]["blocks"]) are named when no validation well was given; a
    run whose test wells are its training wells (no test well or interval) says it has no test wells and
    that its scores are in-sample, rather than "tested on" the training wells.
    """
    if not isinstance(config, Mapping):
        return ""
    train, val, test = (config.get(k) for k in ("train_wells", "validation_wells", "test_wells"))
    parts = []
    if isinstance(train, (list, tuple)) and train:
        parts.append(f"Trained on {_listed(train)}")
    blocks = _validation_blocks(config)
    if isinstance(val, (list, tuple)) and val:
        parts.append(f"validated on {_listed(val)}")
    elif blocks:
        parts.append(f"early stopping watched the held-out blocks {blocks}")
    if isinstance(test, (list, tuple)) and test:
        parts.append("no test wells (the scores are in-sample, on the training intervals)" if list(test) == list(
            train or []) else f"tested on {_listed(test)}")
    if not parts:
        return ""
    text = "; ".join(parts) + "."
    pipe = config.get("well_model") or config.get("pipeline")      # "pipeline": glassformer 0.1's run folders
    if isinstance(pipe, Mapping) and pipe.get("inputs") and pipe.get("target"):
        target = f"log10 {pipe['target']}" if pipe.get("log_target") else str(pipe["target"])
        text += (f" Inputs {esc(', '.join(map(str, pipe['inputs'])))}, target {esc(target)}, windows of "
                 f"{esc(pipe.get('window', '?'))} samples.")
    return text[0].upper() + text[1:]


def intro_paragraphs(run: RunFolder, describe: bool = True) -> list:
    """The introduction as HTML paragraphs: the description (unless not ``describe``: a run inside a
    folder of runs shares its folder's), the wells and intervals, the seeds."""
    paras = []
    text = run.get("description")
    demo = DEMOS.get(run.demo or "")
    if isinstance(text, str) and text.strip():
        paras.append(esc(text.strip()))
    elif demo and describe and not run.children:
        paras.append(esc(demo[1]))
    wells = wells_sentence(run.config)
    if wells:
        paras.append(wells)
    seeds = run.get("seeds")
    if isinstance(seeds, (list, tuple)) and len(seeds) > 1:
        paras.append(f"Every network was trained once per seed ({esc(', '.join(map(str, seeds)))}); tables give "
                     "the mean and the sample standard deviation over seeds.")
    return [f"<p>{p}</p>" for p in paras]


def multi_intro(run: RunFolder) -> list:
    """Introduction of a folder of runs: the demonstration's text and one line per run."""
    demo = DEMOS.get(run.demo or "")
    paras = [f"<p>{esc(demo[1])}</p>"] if demo else []
    items = "".join(f"<li><a href=\"#run-{esc(c.path.name)}\">{esc(title_of(c))}</a>"
                    + (f": {_lower_first(wells_sentence(c.config))}" if wells_sentence(c.config) else "") + "</li>"
                    for c in run.children)
    paras.append(f"<p>{len(run.children)} runs, each with its own section below:</p><ul>{items}</ul>")
    return paras


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]
