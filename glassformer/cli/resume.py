"""Resuming an interrupted ``glassformer train``: the command line that resumes it.

A checkpoint records the options of the run that wrote it
(:func:`glassformer.wells.train_job.run_signature`); ``--resume`` accepts it only for the same
options (output folder, progress and checkpoint frequency may differ), so the resumed run reaches
bit-identically the parameters of an uninterrupted one.  :func:`resume_hint` prints the command.
"""

from __future__ import annotations

import shlex
import click

from .options import GreedyCommand

__all__ = ["resume_hint"]

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
