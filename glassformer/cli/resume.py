"""Resuming an interrupted ``glassformer train``: what must match, and the command that resumes.

A checkpoint records the options of the run that wrote it (:func:`run_signature`); ``--resume``
accepts it only for the same options (output folder, progress and checkpoint frequency may
differ), so the resumed run reaches bit-identically the parameters of an uninterrupted one.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from .. import io
from ..errors import InputError, ModelFileError
from .options import GreedyCommand

__all__ = ["load_resume", "resume_hint", "run_signature"]

#: Options that may differ between an interrupted run and its ``--resume`` (they do not change the result).
_RESUME_FREE = ("out", "overwrite", "progress", "resume", "checkpoint_every")


def run_signature(params: dict) -> dict:
    """The ``train`` options that must match for ``--resume`` (file paths made absolute), JSON-able."""
    sig = {}
    for key, value in params.items():
        if key in _RESUME_FREE:
            continue
        if key in ("data", "test_data", "validation_data", "pretrain_data"):
            value = [str(Path(v).resolve()) for v in value]
        elif key == "manifest" and value:
            value = str(Path(value).resolve())
        sig[key] = list(value) if isinstance(value, tuple) else value
    return sig


def load_resume(resume, params: dict):
    """Read ``--resume DIR`` (a checkpoint folder or a run folder holding ``checkpoint/``) and check it fits.

    Raises
    ------
    ModelFileError
        Unreadable checkpoint, or one not written by ``glassformer train``.
    InputError
        The checkpoint was written with other options (the message lists them).
    """

    folder = Path(resume)
    if (folder / "checkpoint" / "checkpoint.json").exists() or (folder / "checkpoint" / "checkpoint.npz").exists():
        folder = folder / "checkpoint"
    ck = io.load_checkpoint(folder)
    saved = (ck.config or {}).get("options") if isinstance(ck.config, dict) else None
    if not isinstance(saved, dict):
        raise ModelFileError(f"--resume {resume}: the checkpoint was not written by `glassformer train`")
    mine = run_signature(params)
    differ = [f"--{k.replace('_', '-')} is {saved.get(k)!r} there, {v!r} here" for k, v in mine.items()
              if saved.get(k) != v]
    if differ:
        raise InputError(f"--resume {resume}: the checkpoint was written with other options "
                         f"({'; '.join(differ)}); rerun with the options of the interrupted run")
    return ck, folder


def resume_hint(ctx: click.Context, folder) -> str:
    """The command line that resumes this run: its non-default options plus ``--resume folder``."""
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
        if param.multiple and param.opts[0] in GreedyCommand.greedy:
            parts += [param.opts[0], *(str(v) for v in value)]      # --inputs PHIF VSH SW, as documented
            continue
        for v in (value if param.multiple else (value,)):
            parts += [param.opts[0], str(v)]
    parts += ["--resume", str(folder)]
    return " ".join(shlex.quote(p) for p in parts)
