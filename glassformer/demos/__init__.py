"""The demonstrations behind ``glassformer demo``: seed 000's two, and their scale-ups to wells.

========================  ==========================================================================
name                      what it runs
========================  ==========================================================================
``porosity``              demonstration 1: 7 depths, forecast depths 8-14 (:mod:`.porosity`)
``neighbor``              demonstration 2: next-depth target, attention and ablation (:mod:`.neighbor`)
``synthetic-wells``       100 synthetic wells, 80 train / 20 test (:mod:`.synthetic_wells`)
``real-wells``            Volve: F-11 B depth split and across wells (:mod:`.real_wells`)
``wavelengths``           positional wavelengths chosen by validation (:mod:`.wavelengths`)
``translate``             English->French on Tatoeba pairs, BLEU greedy and beam (:mod:`.translate`)
``shakespeare``           character-level decoder-only LM on tiny Shakespeare (:mod:`.shakespeare`)
========================  ==========================================================================

Each ``run(out, echo=print)`` writes a complete run folder (see :mod:`.common`) and returns its metrics.
"""

from __future__ import annotations

from importlib import import_module

DEMOS = {
    "porosity": "porosity",
    "neighbor": "neighbor",
    "synthetic-wells": "synthetic_wells",
    "real-wells": "real_wells",
    "wavelengths": "wavelengths",
    "translate": "translate",
    "shakespeare": "shakespeare",
}

__all__ = ["DEMOS", "run_demo"]


def run_demo(name: str, out, **kwargs) -> dict:
    """Run demo ``name`` (a key of :data:`DEMOS`) into folder ``out``; returns its metrics.

    Raises
    ------
    InputError
        Unknown demo name (lists the known ones).
    """
    from ..errors import InputError

    if name not in DEMOS:
        raise InputError(f"unknown demo {name!r}; choose from {', '.join(DEMOS)}")
    return import_module(f".{DEMOS[name]}", __name__).run(out, **kwargs)
