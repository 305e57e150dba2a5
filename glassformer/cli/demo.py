"""``glassformer demo``: the chapter's demonstrations and their scale-ups, each into its own run folder."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import click

from ..data.volve import volve_available
from ..runs import check_out_folder
from .plugins import demos as demo_catalogue


def _catalogue():
    """The installed demonstrations, or None (the command then says how to install them)."""
    try:
        return demo_catalogue()
    except Exception:       # noqa: BLE001 - an uninstalled or broken plugin must not break the whole CLI
        return None


_DEMOS = _catalogue()
_NAMES = tuple(_DEMOS.DEMOS) if _DEMOS is not None else ()
_HELP = "\n".join(textwrap.fill(_DEMOS.DESCRIPTIONS.get(n, ""), 76, initial_indent=f"{n:<17}", subsequent_indent=" " * 17)
                  for n in _NAMES) if _DEMOS is not None else ""


@click.command("demo", help=f"""Run the chapter's demonstrations and their scale-ups; no NAME runs
{', '.join(_DEMOS.DEFAULT_DEMOS) if _DEMOS is not None else 'the default ones'}.

\b
{_HELP}
""")
@click.argument("name", required=False, type=click.Choice(_NAMES) if _NAMES else None)
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Output folder (default ./glassformer_runs/<name>; with no NAME, one sub-folder per demo).")
@click.option("--quick", is_flag=True, help="Shorter translate / shakespeare runs (~2 min / ~30 s).")
@click.option("--overwrite", is_flag=True,
              help="Replace the files of existing, non-empty output folders (refused otherwise).")
def demo(name, out, quick, overwrite):
    demos = demo_catalogue()
    names = [name] if name else list(demos.DEFAULT_DEMOS)
    skipped = {n for n in names if not name and n in demos.VOLVE_DEMOS and not volve_available()}
    folders = {n: Path(out) / n if (out and not name) else Path(out or Path("glassformer_runs") / n)
               for n in names if n not in skipped}
    for folder in folders.values():        # every folder is checked before any demo runs
        check_out_folder(folder, overwrite=overwrite, label="demo output")
    for n in names:
        if n in skipped:
            click.echo(f"== demo {n} skipped: the Volve files are not under the data root (set GLASSFORMER_DATA "
                       f"to the folder holding real/; `glassformer demo {n}` to insist)")
            continue
        t0 = time.perf_counter()
        click.echo(f"== demo {n} -> {folders[n]}")
        demos.run_demo(n, folders[n], **({"quick": quick} if n in demos.QUICK_DEMOS else {}))
        click.echo(f"== demo {n} done in {time.perf_counter() - t0:.1f} s")
