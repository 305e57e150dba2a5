"""``glassformer check``: the command line of the self-check (click)."""

from __future__ import annotations

import time

import click

from .runner import run_checks

__all__ = ["check_command"]


@click.command("check", short_help="Numerical self-check: layer properties, gradchecks, published values.")
@click.option("--quick", is_flag=True, help="Only the layer properties and the published values (no gradchecks).")
@click.option("-k", "--only", metavar="TEXT", default=None,
              help="Run only the checks whose name contains TEXT (case-insensitive), e.g. -k LayerNorm.")
@click.option("--details", is_flag=True, help="Also print the measured errors and shapes of passing checks.")
def check_command(quick: bool, only: str | None, details: bool) -> None:
    """Run glassformer's numerical self-check and print one [ok]/[FAIL] line per check.

    \b
    properties  the properties of a transformer layer stated in the dictionary
                entry "transformer" and its numerical companion, with the library's
                own layers (8 tokens, d_model 16): same-shape composition, token
                mixing vs. the row-local feed-forward network, Fourier mixing (FNet)
                without scores
    gradcheck   finite differences (float64, relative error <= 1e-6) of every layer,
                mask kind, encoder/decoder block and stack, positional encoding,
                input embedding and the LSTM
    values      cases from public bug reports and papers (PyTorch, BERT-pytorch,
                LLMs-from-scratch, RoFormer, Layer Normalization), recomputed

    Ends with "N/N checks passed"; the exit status is 0 only when every check passes
    (1 otherwise).  Takes a few seconds.
    """
    t0 = time.perf_counter()
    passed, total = run_checks(True, quick=quick, only=only, details=details, echo=click.echo)
    if details:
        click.echo(f"({time.perf_counter() - t0:.1f} s)")
    if total == 0:
        click.echo(f"glassformer check: no check name contains {only!r}", err=True)
    if passed != total or total == 0:
        # SystemExit, not ctx.exit: glassformer.cli.main runs click with standalone_mode=False,
        # where ctx.exit(1) would be turned into a return value and the status would read 0.
        raise SystemExit(1)
