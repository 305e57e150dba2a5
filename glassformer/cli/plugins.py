"""Commands and demonstrations that plug into the CLI through package entry points.

The library never imports the demonstrations: they are scripts on top of it, declared in
``pyproject.toml`` under ``[project.entry-points."glassformer.demos"]`` and found here at run
time (``importlib.metadata``), like any third-party plugin would be.
"""

from __future__ import annotations

from importlib.metadata import entry_points

from ..errors import InputError

__all__ = ["demos"]

#: Entry-point group of demonstration catalogues.
DEMO_GROUP = "glassformer.demos"


def demos():
    """The demonstration catalogue: a module with ``DEMOS``, ``DEFAULT_DEMOS``, ``DESCRIPTIONS``,
    ``run_demo(name, out, **kw)`` and ``compare_demo(name, out, **kw)``.

    Raises
    ------
    InputError
        No catalogue is installed (the package was not installed with pip).
    """
    found = list(entry_points(group=DEMO_GROUP))
    if not found:
        raise InputError("no demonstrations are installed (entry-point group glassformer.demos is empty); "
                         "install the package with: pip install -e .")
    return found[0].load()
