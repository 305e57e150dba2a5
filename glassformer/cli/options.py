"""What several commands parse the same way: intervals, curve lists, positional encodings.

Units: intervals are ``TOP:BASE`` in the file's depth unit (metres for the Volve files);
wavelengths are in position units (samples with ``--positions index``, the depth unit with
``--positions depth``).
"""

from __future__ import annotations

import math

import click

from ..data.units import STATED_UNITS, curve_name
from ..errors import InputError
from ..nn.positional import get_spec
from ..nn.positional import positional_names as registered_positional_names
from ..wells.option_values import implied_d_model, input_names, positional_options

__all__ = ["DEPTH_SPEC_HELP", "GreedyCommand", "POSITIONAL_HELP", "WAVELENGTHS_HELP",
           "file_options", "implied_d_model", "input_names", "parse_interval", "positional_names",
           "positional_options", "target_name", "well_options"]


def positional_names() -> list:
    """Every ``--positional`` name, from the registry of positional encodings."""
    return registered_positional_names()


def _positional_help() -> str:
    """``--positional``'s help, read from the registry: the names, then what each needs."""
    specs = [get_spec(n) for n in positional_names()]
    needs = [f"'{s.name}' needs --{o}" for s in specs for o in s.cli_options if o in s.required]
    needs += [f"'{s.name}' needs --positions index" for s in specs if s.integer_positions]
    return f"Positional encoding: {', '.join(positional_names())}. " + "; ".join(needs) + "."


POSITIONAL_HELP = _positional_help()
WAVELENGTHS_HELP = ("Wavelengths W1 W2 ... for --positional wavelengths, in position units (samples with --positions "
                    "index, the file's depth unit, e.g. m, with --positions depth): one sine/cosine pair each")


def parse_interval(text: str, option: str) -> tuple[float, float]:
    """``"TOP:BASE"`` -> ``(top, base)`` floats with top < base.

    Raises
    ------
    InputError
        Not two finite numbers separated by a colon, or top >= base (the message names ``option``).
    """
    try:
        a, b = (float(v) for v in str(text).split(":"))
    except ValueError:
        raise InputError(f"{option} must be TOP:BASE in the file's depth unit (e.g. 3351.6:4300), got {text!r}") \
            from None
    if not (math.isfinite(a) and math.isfinite(b)) or a >= b:
        raise InputError(f"{option} must be TOP:BASE with TOP < BASE, got {text!r}")
    return a, b


def target_name(ctx, param, target: str | None) -> str | None:
    """``--target`` as a curve name (a click callback): ``"Perm (mD)"`` -> ``"PERM"`` (see :func:`input_names`)."""
    return None if target is None else curve_name(target)


class GreedyCommand(click.Command):
    """A command whose ``--inputs`` (and ``--wavelengths``, ``--pretrain-data``, ``--test-cores``,
    ``--validation-cores``) take several space-separated values: ``--inputs PHIF VSH SW``.

    Click options take a fixed number of values, so the arguments are rewritten to
    ``--inputs PHIF --inputs VSH --inputs SW`` (a ``multiple=True`` option) before parsing.
    """

    greedy = ("--inputs", "--wavelengths", "--pretrain-data", "--test-cores", "--validation-cores")
    examples = {"--inputs": "curve mnemonic, e.g. --inputs PHIF VSH SW",
                "--wavelengths": "wavelength, e.g. --wavelengths 4 16 64",
                "--pretrain-data": "well file, e.g. --pretrain-data F-1A.las F-1B.las",
                "--test-cores": "core (run) number, e.g. --test-cores 2 4",
                "--validation-cores": "core (run) number, e.g. --validation-cores 5"}

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


DEPTH_SPEC_HELP = ("TOP:BASE for every well, or WELL=TOP:BASE for one (WELL: its name or file name, or a unique "
                   "part of either, e.g. F11B=3351.6:4300); repeatable; file depth unit")


UNIT_HELP = ("State a curve's unit, e.g. --unit POR=% or --unit PHIF=v/v; repeatable. Replaces the unit a file "
             "writes (a CSV header 'Por (%)', 'Por [%]' or 'POR_PCT' names the curve POR in %). --unit DEPTH=ft "
             "(or the depth column's name, e.g. --unit Depth=ft) states the depth unit: m or ft. Units: "
             f"{', '.join(STATED_UNITS)} (also written percent, frac, feet, metres, millidarcy, ...).")
DEPTH_COLUMN_HELP = ("The depth column of CSV and Excel wells, by its header or name; a unit written in it, as in "
                     "'Depth (ft)', is the depth unit; "
                     "default: DEPTH, DEPT, MD or TDEP.")
SHEET_HELP = ("The sheet to read from every Excel (.xlsx) file given (training, validation and test wells alike); "
              "default: every sheet is a well.")


def file_options(command):
    """The options that say how a well file is read: ``--unit`` (parameter ``units``), ``--depth-column``,
    ``--sheet`` (train, cv, compare, sweep, predict)."""
    for decorator in reversed([
        click.option("--unit", "units", multiple=True, metavar="CURVE=UNIT", help=UNIT_HELP),
        click.option("--depth-column", default=None, metavar="NAME", help=DEPTH_COLUMN_HELP),
        click.option("--sheet", default=None, metavar="NAME", help=SHEET_HELP),
    ]):
        command = decorator(command)
    return command


def well_options(command):
    """The options that name wells, their roles and intervals, and curve aliases (train, compare).

    Adds ``--data``, ``--manifest``, ``--train-depth``, ``--test-depth``, ``--test-data``,
    ``--alias`` (parameter ``aliases``) and ``--validation-split`` (parameters named as the options),
    and :func:`file_options`.
    """
    path = click.Path(exists=True, dir_okay=False)
    command = file_options(command)
    for decorator in reversed([
        click.option("--data", "data", multiple=True, type=path,
                     help="Training well file (.las, .csv or .xlsx: every sheet a well, or --sheet); repeat for "
                          "several wells."),
        click.option("--manifest", default=None, type=path,
                     help="CSV of wells with columns file, well, role (train/val/test), top, base (blank: the whole "
                          "valid log); instead of or besides --data."),
        click.option("--train-depth", multiple=True,
                     help=f"Training interval: {DEPTH_SPEC_HELP}. Default: each well's whole valid log."),
        click.option("--test-depth", multiple=True,
                     help=f"Forecast/test interval: {DEPTH_SPEC_HELP}. Of the --test-data wells when given, else a "
                          "forecast of the training wells (sharing at most their boundary sample)."),
        click.option("--test-data", multiple=True, type=path,
                     help="Test well file(s), never trained on (whole valid logs, or their --test-depth)."),
        click.option("--alias", "aliases", multiple=True, metavar="NAME=CURVE",
                     help="Use CURVE where a well lacks NAME, e.g. --alias PHIF=PHIE; repeatable. The curves used "
                          "are written to config.json (predict also tries common mnemonics such as PHIE for PHIF)."),
        click.option("--validation-split", type=click.Choice(["deepest", "none"]), default="deepest",
                     show_default=True,
                     help="Early stopping without --validation-data: on the deepest 10 % of each training interval "
                          "(never windows that overlap training windows), or none (the training loss)."),
    ]):
        command = decorator(command)
    return command
