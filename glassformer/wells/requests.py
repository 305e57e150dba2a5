"""What a user asked of the well job, as typed request objects that the command line fills.

A command of the command line does three things: click parses the options into a request (the
dataclasses here, grouped as a petrophysicist thinks of them: which wells, which model settings,
which core plugs, where to run), the library validates and plans it, and the plan runs as an
experiment (:mod:`glassformer.runs.protocol`).  A script builds the same requests without click.

Each group is filled from click's parameters by name (:meth:`Group.pick`); a field keeps the name of
its option (``--d-model`` -> ``d_model``) so that a setting can be followed from the command line
down to the layers under one name.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping

__all__ = ["EngineRequest", "PlugsRequest", "ReadingRequest", "TrainRequest", "TransformerRequest", "WellsRequest"]


class Group:
    """A request group: :meth:`pick` fills it from a mapping of option values by field name."""

    @classmethod
    def pick(cls, params: Mapping[str, Any]):
        """The group of the values of ``params`` whose names are its fields (missing ones keep their defaults)."""
        return cls(**{f.name: _plain(params[f.name]) for f in fields(cls) if f.name in params})


def _plain(value):
    """click's repeatable options arrive as tuples; a request keeps them as tuples (immutable, comparable)."""
    return tuple(value) if isinstance(value, list) else value


@dataclass(frozen=True)
class ReadingRequest(Group):
    """How the user's files are read: stated units (``--unit CURVE=UNIT``), the depth column of a table,
    the sheet of a workbook."""

    units: tuple = ()
    depth_column: str | None = None
    sheet: str | None = None


@dataclass(frozen=True)
class WellsRequest(Group):
    """Which wells play which role, over which depth intervals (depth in the files' unit)."""

    data: tuple = ()
    manifest: str | None = None
    train_depth: tuple = ()
    test_depth: tuple = ()
    test_data: tuple = ()
    validation_data: tuple = ()
    aliases: tuple = ()
    validation_split: str = "deepest"


@dataclass(frozen=True)
class TransformerRequest(Group):
    """The well transformer's settings (window in samples, ``d_model``, heads, layers, Adam learning rate)."""

    window: int = 32
    stride: int | None = None
    epochs: int = 30
    positions: str = "index"
    positional: str = "sinusoidal"
    wavelengths: tuple = ()
    d_model: int = 16
    heads: int = 2
    layers: int = 1
    lr: float = 3e-3
    seed: int = 42
    progress: bool = True


@dataclass(frozen=True)
class PlugsRequest(Group):
    """Core plugs as the target (``--core`` and its options), and a deep ensemble (``--ensemble K``)."""

    core: str | None = None
    core_depth: str = "DEPTH"
    core_target: str = "CKHL"
    core_porosity: str = "CPOR"
    core_porosity_unit: str | None = None
    core_run: str = "auto"
    match_depth: str = "PHIF"
    no_depth_match: bool = False
    depth_shift: tuple = ()
    shifts_file: str | None = None
    shift_window: float = 2.0
    test_cores: tuple = ()
    validation_cores: tuple = ()
    validation_depth: str | None = None
    ensemble: int | None = None
    pretrain_data: tuple = ()
    log_perm_curve: str = "KLOGH"
    pretrain_epochs: int = 10


@dataclass(frozen=True)
class EngineRequest(Group):
    """Where independent tasks run: ``jobs`` worker processes, or a Dask ``scheduler`` (default: serially)."""

    jobs: int | None = None
    scheduler: str | None = None


@dataclass(frozen=True)
class TrainRequest:
    """``glassformer train``: fit the well transformer (or an ensemble, or on core plugs) and write a run folder.

    Attributes
    ----------
    inputs : tuple of str
        Input curve mnemonics (the first is taken as porosity by the porosity-permeability transform).
    target : str or None
        Target curve mnemonic (None with core plugs as the target).
    log_target : bool
        Model log10 of the target (permeability in mD).
    out : str
        The run folder.
    members : int or None
        The transformer is the mean of this many members trained from their own seeds (1: one
        transformer); None: :data:`~glassformer.wells.member_mean.DEFAULT_MEMBERS` (not with core
        plugs or ``--ensemble``, whose own members give the prediction).
    """

    inputs: tuple
    target: str | None
    out: str
    log_target: bool = False
    wells: WellsRequest = field(default_factory=WellsRequest)
    reading: ReadingRequest = field(default_factory=ReadingRequest)
    transformer: TransformerRequest = field(default_factory=TransformerRequest)
    plugs: PlugsRequest = field(default_factory=PlugsRequest)
    engine: EngineRequest = field(default_factory=EngineRequest)
    overwrite: bool = False
    checkpoint_every: int = 1
    resume: str | None = None
    members: int | None = None

    @classmethod
    def from_options(cls, params: Mapping[str, Any]) -> "TrainRequest":
        """The request of ``glassformer train``'s option values (click's ``ctx.params``)."""
        return cls(inputs=tuple(params["inputs"]), target=params.get("target"), out=str(params["out"]),
                   log_target=bool(params.get("log_target", False)), wells=WellsRequest.pick(params),
                   reading=ReadingRequest.pick(params), transformer=TransformerRequest.pick(params),
                   plugs=PlugsRequest.pick(params), engine=EngineRequest.pick(params),
                   overwrite=bool(params.get("overwrite", False)),
                   checkpoint_every=int(params.get("checkpoint_every", 1)), resume=params.get("resume"),
                   members=params.get("members"))
