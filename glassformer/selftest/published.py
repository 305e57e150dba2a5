"""The published numbers glassformer reproduces, read from ``published.json`` (stored once).

Two kinds, each cited so a reader can look it up:

* the chapter's printed values (Pyrcz 2024, "Transformers"): :func:`demonstration_1` and
  :func:`demonstration_2`, with glassformer's measured reproduction of demonstration 2;
* cases from public bug reports and papers, each with inputs and hand-computed expected values:
  :func:`bug_report` (by key) and :func:`bug_reports` (all of them, in file order).

``glassformer check``, the demonstrations and the tests all read the numbers from here, so a value
is written in exactly one place.  Every call parses the file afresh (it is a few kilobytes), so a
caller may modify what it gets.

Example
-------
>>> from glassformer.selftest.published import bug_report, demonstration_2
>>> bug_report("causal_attention").urls[1]
'https://github.com/pytorch/pytorch/issues/99282'
>>> list(demonstration_2()["printed_mean_batch_mse"])
[20, 500, 1000]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files

import numpy as np

__all__ = ["BugReport", "bug_report", "bug_reports", "chapter_source", "demonstration_1", "demonstration_2"]

_FILE = "published.json"


def _load() -> dict:
    return json.loads(files(__package__).joinpath(_FILE).read_text(encoding="utf-8"))


def _arrays(value):
    """JSON lists become NumPy arrays (nested ragged lists become lists of arrays); dicts recurse."""
    if isinstance(value, dict):
        return {k: _arrays(v) for k, v in value.items()}
    if isinstance(value, list):
        try:
            return np.asarray(value)
        except ValueError:          # ragged, e.g. one gradient per parameter of different sizes
            return [_arrays(v) for v in value]
    return value


def _by_epoch(values: dict) -> dict:
    """``{"20": v}`` -> ``{20: v}`` in the file's (ascending) order."""
    return {int(epoch): float(v) for epoch, v in values.items()}


@dataclass(frozen=True)
class BugReport:
    """A case from a public bug report (or a paper) with hand-computed values.

    Attributes
    ----------
    key : str
        Its key in ``published.json``, e.g. ``"fully_padded_sequence"``.
    title : str
        What it checks, in words.
    source : str
        Where a reader finds it: a paper by author and year, or a public bug report by repository
        and number (its address is in ``urls``).
    urls : tuple of str
    about : str
        The setting: which layer, which options, what the expected values are of.
    inputs, expected : dict
        Values by name; lists are NumPy arrays (booleans stay boolean).
    """

    key: str
    title: str
    source: str
    urls: tuple
    about: str
    inputs: dict
    expected: dict

    @property
    def name(self) -> str:
        """``"<title> (<source>)"``: the line ``glassformer check`` prints."""
        return f"{self.title} ({self.source})"


def _bug_report(key: str, entry: dict) -> BugReport:
    return BugReport(key=key, title=entry["title"], source=entry["source"], urls=tuple(entry["urls"]),
                     about=entry["about"], inputs=_arrays(entry["inputs"]), expected=_arrays(entry["expected"]))


def bug_reports() -> dict:
    """Every bug-report case, ``{key: BugReport}``, in the file's order."""
    return {key: _bug_report(key, entry) for key, entry in _load()["bug_reports"].items()}


def bug_report(key: str) -> BugReport:
    """One bug-report case by key.

    Raises
    ------
    KeyError
        For an unknown key; the message lists the known ones.
    """
    entries = _load()["bug_reports"]
    if key not in entries:
        raise KeyError(f"no published bug-report case {key!r}; known: {', '.join(entries)}")
    return _bug_report(key, entries[key])


def chapter_source() -> str:
    """The chapter the demonstrations come from (author, year, title, DOI)."""
    return _load()["chapter"]["source"]


def demonstration_1() -> dict:
    """The chapter's demonstration 1 ("seven depths").

    Returns
    -------
    dict
        ``name``; ``printed_mse`` ``{epoch: MSE}`` (epoch 0 is before the first update, six
        decimals); ``printed_training_permeability_mD`` (7,) at depths 1-7 m after 30,000 epochs;
        ``printed_forecast_listing_mD`` (7,): the values the chapter's forecast listing prints under
        the labels of depths 8-14, which are the outputs at depths 1-7 of one 14-depth window.
    """
    demo = _load()["chapter"]["demonstration_1"]
    return {"name": demo["name"], "printed_mse": _by_epoch(demo["printed_mse"]["values"]),
            "printed_training_permeability_mD": np.asarray(demo["printed_training_permeability_mD"]["values"]),
            "printed_forecast_listing_mD": np.asarray(demo["printed_forecast_listing_mD"]["values"])}


def demonstration_2() -> dict:
    """The chapter's demonstration 2 ("the next depth") and glassformer's measured reproduction.

    Returns
    -------
    dict
        ``name``; ``printed_mean_batch_mse`` ``{1-based epoch: MSE}`` (printed by the chapter);
        measured by glassformer after the 1,000 epochs: ``held_out_mse`` (six decimals),
        ``attention_next_depth_weight`` and ``attention_elsewhere_weight`` (three decimals) and
        ``ablation_mse`` ``{"uniform", "identity"}`` (six decimals).
    """
    demo = _load()["chapter"]["demonstration_2"]
    measured = {k: v for k, v in demo["reproduction"].items() if k != "about"}
    return {"name": demo["name"], "printed_mean_batch_mse": _by_epoch(demo["printed_mean_batch_mse"]["values"]),
            **measured}
