"""The demonstrations behind ``glassformer demo``: the chapter's two, and their scale-ups to wells.

========================  ==========================================================================
name                      what it runs
========================  ==========================================================================
``porosity``              demonstration 1: 7 depths, forecast depths 8-14 (:mod:`.porosity`)
``neighbor``              demonstration 2: next-depth target, attention and ablation (:mod:`.neighbor`)
``synthetic-wells``       100 synthetic wells, 80 train / 20 test (:mod:`.synthetic_wells`)
``real-wells``            Volve: a blind well (F-1 A), then the F-11 B depth split (:mod:`.real_wells`)
``wavelengths``           positional wavelengths chosen by validation (:mod:`.wavelengths`)
``translate``             English->French on Tatoeba pairs, BLEU greedy and beam (:mod:`.translate`)
``shakespeare``           character-level decoder-only LM on tiny Shakespeare (:mod:`.shakespeare`)
========================  ==========================================================================

Each ``run(out)`` writes a complete run folder (see :mod:`glassformer.runs`) and returns its metrics;
what it reports goes through :mod:`glassformer.reporting` (shown by ``glassformer demo``, or inside
``glassformer.reporting.shown()``).  The demos are scripts on the public API; the CLI finds this catalogue through the
``glassformer.demos`` entry point (the library never imports it).
"""

from __future__ import annotations

from ..errors import InputError
from . import neighbor, porosity, real_wells, shakespeare, synthetic_wells, translate, wavelengths
from .compare import compare_demo

#: Demo name -> its module (each has ``run(out, **kw)``).
DEMOS = {
    "porosity": porosity,
    "neighbor": neighbor,
    "synthetic-wells": synthetic_wells,
    "real-wells": real_wells,
    "wavelengths": wavelengths,
    "translate": translate,
    "shakespeare": shakespeare,
}

#: What ``glassformer demo`` runs without a name (the others are run by name: time budget).
DEFAULT_DEMOS = ("porosity", "neighbor", "synthetic-wells", "real-wells")
#: Demos that accept ``quick=True``.
QUICK_DEMOS = ("translate", "shakespeare")
#: Demos that need the Volve files under the data root.
VOLVE_DEMOS = ("real-wells",)

#: One line per demo for ``glassformer demo --help``.
DESCRIPTIONS = {
    "porosity": "demonstration 1: seven depths (m), porosity (%) -> permeability (mD), forecast depths 8-14 m "
                "under two schemes (~15 s)",
    "neighbor": "demonstration 2: the next depth -- target 2 x porosity at the next depth; attention lag and "
                "ablation on 200 held-out sequences (~20 s)",
    "synthetic-wells": "100 synthetic wells (80 train / 20 test), log10 mD metrics",
    "real-wells": "Volve: blind well 15/9-F-1 A, then the 15/9-F-11 B depth split (needs the Volve files)",
    "wavelengths": "positional wavelengths (m) chosen on a validation interval (~40 s)",
    "translate": "English->French on Tatoeba pairs (<= 8 words): BLEU greedy and beam vs copying the source and "
                 "an untrained model (~5 min; --quick ~2 min)",
    "shakespeare": "character-level decoder-only LM on tiny Shakespeare: validation loss and a sample "
                   "(~3.5 min; --quick ~30 s)",
}

__all__ = ["DEFAULT_DEMOS", "DEMOS", "DESCRIPTIONS", "QUICK_DEMOS", "VOLVE_DEMOS", "compare_demo", "run_demo"]


def run_demo(name: str, out, **kwargs) -> dict:
    """Run demo ``name`` (a key of :data:`DEMOS`) into folder ``out``; returns its metrics.

    Raises
    ------
    InputError
        Unknown demo name (lists the known ones).
    """
    if name not in DEMOS:
        raise InputError(f"unknown demo {name!r}; choose from {', '.join(DEMOS)}")
    return DEMOS[name].run(out, **kwargs)

