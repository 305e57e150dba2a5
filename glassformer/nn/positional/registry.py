"""The registry of positional encodings: one entry per encoding, carrying everything about it.

An entry (:class:`PositionalSpec`) gives the factory, the kind -- ``"additive"`` (a vector ``p_t``
added to the input embedding, the chapter's ``z_t = e_t + p_t``) or ``"per_head"`` (a hook that acts
on the per-head queries and keys inside attention, like RoPE) --, a one-line description, the options
the command line exposes, what the options imply for ``d_model``, and the settings of its gradient
check.  The options an encoding accepts and requires are read from its factory's signature.

Each family module of this package registers its entries when imported, and the package imports
every module it holds: adding an encoding is one new file (plus its test).  The CLI's
``--positional`` choices, ``glassformer check`` and the documentation all read this registry.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...errors import InputError

__all__ = ["PositionalSpec", "REGISTRY", "register", "get_spec", "positional_names", "build_positional",
           "get_positional_encoding"]

KINDS = ("additive", "per_head")
# Keywords every factory may take that are not user options.
_RESERVED = ("d_model", "num_heads", "rng", "dtype")
# Former names still accepted, so that saved models keep loading.
_ALIASES = {"seed": "chapter", "rope": "rotary"}


@dataclass(frozen=True)
class PositionalSpec:
    """Everything about one positional encoding.

    Attributes
    ----------
    name : str
        The user-facing name (``--positional``, ``positional=``).
    factory : callable
        ``factory(d_model, [num_heads=...], [rng=...], [dtype=...], **options)``; keywords it does not
        declare are not passed.  Returns the additive module or the per-head hook.
    description : str
        One line for ``--help`` and the documentation.
    kind : {"additive", "per_head"}
    cli_options : tuple of str
        Options the command line exposes as flags of the same name (``wavelengths`` -> ``--wavelengths``).
    integer_positions : bool
        True for a table with one vector per sample index: positions must be integers below ``max_len``.
    d_model_for : callable, optional
        ``d_model_for(options) -> int``: the width the options imply (None: any width).
    gradcheck : dict
        How ``glassformer check`` tests it: ``d_model`` (and ``num_heads`` for a per-head kind),
        ``variants`` (a list of option dicts, each checked) and ``positions`` (``"depth"``: irregular
        depths near 1500 m, ``"window"``: the same relative to the window top, ``"index"``: integer
        sample indices with repeats).
    """

    name: str
    factory: Callable
    description: str
    kind: str = "additive"
    cli_options: tuple = ()
    integer_positions: bool = False
    d_model_for: Callable | None = None
    gradcheck: dict = field(default_factory=dict)

    def _parameters(self) -> dict:
        return dict(inspect.signature(self.factory).parameters)

    @property
    def options(self) -> tuple:
        """Names of the options the factory accepts."""
        return tuple(p for p in list(self._parameters())[1:] if p not in _RESERVED)

    @property
    def required(self) -> tuple:
        """Options without a default: the user must give them."""
        return tuple(p for p in self.options if self._parameters()[p].default is inspect.Parameter.empty)

    def build(self, d_model: int, num_heads: int = 1, *, rng=None, dtype=np.float64, **options):
        """Call the factory, refusing unknown options and naming missing ones."""
        where = "build_positional"
        unknown = [k for k in options if k not in self.options]
        if unknown and not self.options:
            raise InputError(f"{where}: {self.name!r} takes no options, got {sorted(options)}")
        if unknown:
            raise InputError(f"{where}: unknown option(s) {unknown} for {self.name!r}; accepted: {list(self.options)}")
        for name in self.required:
            if name not in options:
                raise InputError(f"{where}: {self.name!r} needs the option {name}=...")
        params = self._parameters()
        extra = {k: v for k, v in (("num_heads", num_heads), ("rng", rng), ("dtype", dtype)) if k in params}
        return self.factory(d_model, **extra, **options)


#: name -> PositionalSpec, in registration order.
REGISTRY: dict = {}


def register(spec: PositionalSpec) -> PositionalSpec:
    """Add ``spec`` to the registry (a family module calls this once per encoding it defines)."""
    if spec.kind not in KINDS:
        raise ValueError(f"positional encoding {spec.name!r}: kind must be one of {KINDS}, got {spec.kind!r}")
    if spec.name in REGISTRY or spec.name in _ALIASES:
        raise ValueError(f"positional encoding {spec.name!r} is registered twice")
    REGISTRY[spec.name] = spec
    return spec


def positional_names() -> list:
    """Every registered name (the ``--positional`` choices): the additive kinds, then the per-head ones."""
    return sorted(REGISTRY, key=lambda n: (KINDS.index(REGISTRY[n].kind), n))


def get_spec(name: str, where: str = "positional") -> PositionalSpec:
    """The entry of ``name`` (or of a former name); InputError listing the names for an unknown one."""
    spec = REGISTRY.get(_ALIASES.get(name, name)) if isinstance(name, str) else None
    if spec is None:
        raise InputError(f"{where}: positional name must be one of {positional_names()}, got {name!r}")
    return spec


def build_positional(name: str, d_model: int, num_heads: int = 1, *, rng=None, dtype=np.float64,
                     max_len: int | None = None, **options):
    """Build a positional encoding by name: the one entry point models use.

    Parameters
    ----------
    name : str
        A registered name (:func:`positional_names`).
    d_model, num_heads : int
        Model width and attention heads (a per-head encoding acts on ``d_model / num_heads`` features).
    rng : int or numpy.random.Generator, optional
        Used by the encodings that draw numbers (learned, continuous, fourier).
    dtype : float64 (default) or float32
    max_len : int, optional
        The longest sequence of the model, given to the encodings that take one (a learned table)
        and ignored by the others.
    **options
        The encoding's own options (``wavelengths``, ``base``, ``hidden``, ``sigma``, ...).

    Returns
    -------
    (additive, head_hook)
        The module whose output is added to the input embedding -- all zeros for a per-head kind -- and
        the hook to give the attention layers (None for an additive kind).

    Raises
    ------
    InputError for an unknown name or option, or a missing required option.
    """
    spec = get_spec(name, "build_positional")
    if max_len is not None and "max_len" in spec.options:
        options["max_len"] = max_len
    built = spec.build(d_model, num_heads, rng=rng, dtype=dtype, **options)
    if spec.kind == "additive":
        return built, None
    return get_spec("none").build(d_model, dtype=dtype), built


def get_positional_encoding(name: str, d_model: int, *, rng=None, dtype=np.float64, **options):
    """Build an additive positional encoding by name (see :func:`build_positional`).

    Raises
    ------
    InputError for an unknown name or option, a missing required option, or a per-head kind
    (rotary), which is applied inside attention: use :func:`build_positional`.
    """
    spec = get_spec(name, "get_positional_encoding")
    if spec.kind != "additive":
        raise InputError(f"get_positional_encoding: {spec.name!r} is applied to queries and keys inside attention, "
                         "not added to the input; use build_positional, which returns its head hook")
    return spec.build(d_model, rng=rng, dtype=dtype, **options)
