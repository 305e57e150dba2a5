"""``glassformer sweep`` as a request: the wells' training, validation and test parts, checked, then the sweep.

:class:`SweepRequest` is what the command line asks for; :func:`run_sweep_request` validates it,
reads the training and validation parts, runs :class:`~glassformer.wells.sweep.SettingsSweep` and
reads the test part only after the choice is made (:class:`HeldOut`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..data import common_depth_unit, parse_units, read_wells
from ..data.volve import ATTRIBUTION, is_volve
from ..errors import InputError
from ..models import SequenceRegressor
from ..nn.positional import get_spec
from ..parallel import make_engine
from ..reporting import warn
from ..runs import check_out_folder, run_experiment
from .checks import check_wells
from .dataset import parse_depth_specs
from .model import WellModel
from .requests import EngineRequest, ReadingRequest, TransformerRequest, WellsRequest
from .splits import check_training_logs, forecast_logs
from .sweep import SettingsSweep

__all__ = ["HeldOut", "SweepRequest", "run_sweep_request"]


@dataclass(frozen=True)
class SweepRequest:
    """``glassformer sweep``: every combination of the grid's values, chosen on validation data, scored once on test.

    Attributes
    ----------
    inputs : tuple of str
        Input curve names.
    target : str
        Target curve name.
    out : str
        The sweep's folder.
    log_target : bool
        Model log10 of the target (permeability in mD).
    grid : dict
        ``{"d_model", "num_heads", "num_layers", "window", "lr"}`` -> tuple of values to try.
    wells : WellsRequest
        ``data`` (training wells), ``train_depth`` (one ``TOP:BASE``), ``validation_data`` and
        ``test_data`` (wells of their own), ``test_depth`` (at most one ``TOP:BASE``).
    val_depth : tuple of str
        At most one ``TOP:BASE``: the validation interval (of the training wells, or of ``validation_data``).
    transformer : TransformerRequest
        The settings every setting keeps: ``stride``, ``epochs``, ``positions``, ``positional``,
        ``seed``, ``progress`` (its grid fields are not used: ``grid`` holds those).
    """

    inputs: tuple
    target: str
    out: str
    grid: dict
    log_target: bool = False
    wells: WellsRequest = field(default_factory=WellsRequest)
    val_depth: tuple = ()
    reading: ReadingRequest = field(default_factory=ReadingRequest)
    transformer: TransformerRequest = field(default_factory=lambda: TransformerRequest(progress=False))
    engine: EngineRequest = field(default_factory=EngineRequest)
    overwrite: bool = False

    @classmethod
    def from_options(cls, params: Mapping[str, Any]) -> "SweepRequest":
        """The request of ``glassformer sweep``'s option values (click's ``ctx.params``): each interval option
        holds one ``TOP:BASE`` (or none); the grid options hold every value to try."""
        one = {k: () if params.get(k) is None else (params[k],) for k in ("train_depth", "val_depth", "test_depth")}
        grid = {"d_model": params["d_model"], "num_heads": params["heads"], "num_layers": params["layers"],
                "window": params["window"], "lr": params["lr"]}
        scalar = {k: v for k, v in params.items() if k not in grid and k not in ("heads", "layers")}
        return cls(inputs=tuple(params["inputs"]), target=params["target"], out=str(params["out"]),
                   grid={k: tuple(v) for k, v in grid.items()}, log_target=bool(params.get("log_target", False)),
                   wells=WellsRequest.pick({**params, **one}), val_depth=one["val_depth"],
                   reading=ReadingRequest.pick(params), transformer=TransformerRequest.pick(scalar),
                   engine=EngineRequest.pick(params), overwrite=bool(params.get("overwrite", False)))

    def config(self) -> dict:
        """The request as ``config.json`` records it (the options by name; paths and intervals as typed)."""
        w, t, r = self.wells, self.transformer, self.reading
        return {"command": "sweep", "inputs": list(self.inputs), "data": list(w.data), "target": self.target,
                "log_target": self.log_target, "train_depth": _first(w.train_depth),
                "val_depth": _first(self.val_depth),
                "val_data": list(w.validation_data), "test_depth": _first(w.test_depth), "test_data": list(w.test_data),
                "units": list(r.units), "depth_column": r.depth_column, "sheet": r.sheet,
                "d_model": list(self.grid["d_model"]), "heads": list(self.grid["num_heads"]),
                "layers": list(self.grid["num_layers"]), "window": list(self.grid["window"]),
                "lr": list(self.grid["lr"]), "stride": t.stride, "epochs": t.epochs, "positions": t.positions,
                "positional": t.positional, "seed": t.seed}

    def check(self) -> list:
        """Refuse what cannot work before a well is read; returns the input names.

        Raises
        ------
        InputError
            No validation data, the target among the inputs, no training data or interval, several
            intervals for one part, or a positional encoding a sweep of d_model cannot use.
        """
        w = self.wells
        if not (self.val_depth or w.validation_data):
            raise InputError("sweep chooses on validation data: give --val-depth TOP:BASE and/or --val-data FILE "
                             "(the test data are never used to choose)")
        names = [str(m) for m in self.inputs]
        if str(self.target).strip().upper() in {m.upper() for m in names}:
            raise InputError(f"--target {self.target} is also one of --inputs {' '.join(names)}; the model would see "
                             "the answer")
        if not w.data or not w.train_depth:
            raise InputError("sweep needs the training wells and interval: --data FILE --train-depth TOP:BASE")
        spec = get_spec(self.transformer.positional, "--positional")
        if "wavelengths" in spec.cli_options:
            raise InputError("--positional wavelengths fixes d_model to 2 x the number of wavelengths; sweep d_model "
                             "with another encoding, or use `glassformer train`")
        if spec.integer_positions and self.transformer.positions == "depth":
            raise InputError(f"--positional {spec.name} needs --positions index (one vector per sample index 1..T); "
                             "depths in metres are not table indices")
        return names

    def well_model(self, names) -> WellModel:
        """The base well model: every setting of the grid replaces its d_model, heads, layers, window and lr."""
        t, e = self.transformer, self.engine
        parallel = bool(e.scheduler) or (e.jobs or 1) > 1
        # a learned table needs one vector per position 1..window; each setting sets its own window's
        options = {"max_len": max(self.grid["window"]) + 1} if get_spec(t.positional).integer_positions else {}
        model = SequenceRegressor(positional=t.positional, positional_options=options, epochs=t.epochs,
                                  random_state=t.seed, progress=t.progress and not parallel)
        return WellModel(names, self.target, log_target=self.log_target, stride=t.stride, positions=t.positions,
                         model=model)


def run_sweep_request(request: SweepRequest) -> dict:
    """Validate ``request``, sweep its grid on the training and validation parts, then score the choice on test.

    Returns
    -------
    dict, as written to ``metrics.json`` (see :func:`glassformer.wells.sweep.finish_sweep`).

    Raises
    ------
    InputError
        A bad request (see :meth:`SweepRequest.check`), a bad grid, overlapping parts -- before
        anything is fitted.
    """
    check_out_folder(request.out, overwrite=request.overwrite)
    names = request.check()
    w = request.wells
    split = HeldOut(_one(w.train_depth, "--train-depth"), _one(request.val_depth, "--val-depth"), w.validation_data,
                    _one(w.test_depth, "--test-depth"), w.test_data, request.reading)
    logs, train_logs, val_logs = split.training_and_validation(w.data, names, request.target,
                                                               max(request.grid["window"]))
    test = (lambda: split.test(logs)) if (w.test_depth or w.test_data) else None      # read after the choice
    sweep = SettingsSweep(train_logs, val_logs, request.well_model(names), dict(request.grid), test_logs=test,
                          config=request.config(), attribution=ATTRIBUTION if any(map(is_volve, logs)) else None)
    with make_engine(jobs=request.engine.jobs, scheduler=request.engine.scheduler) as engine:
        return run_experiment(sweep, request.out, engine=engine, overwrite=True, report=False)


def _first(values):
    """An interval option's one value as typed, or None."""
    return values[0] if values else None


def _one(specs, option: str):
    """The one ``(top, base, label)`` of an interval option's values, or None when it was not given."""
    parsed = parse_depth_specs(specs, option)
    if not parsed:
        return None
    (key, (top, base), label), *more = parsed
    if key is not None or more:
        raise InputError(f"{option}: sweep takes one TOP:BASE for every well, got {' '.join(map(str, specs))}")
    return top, base, label


class HeldOut:
    """The training, validation and test parts of the wells.

    Validation and test are intervals of the training wells (``val`` / ``test``) or wells of their
    own (``val_data`` / ``test_data``, whole or that interval).  Same-well parts may share one
    boundary depth, which stays in the earlier part (training, then validation); larger overlaps
    are refused before anything is fitted.

    Parameters
    ----------
    train, val, test : ``(top, base, label)`` of each interval (``label``: the option as typed), or None
    val_data, test_data : paths of the validation and test wells
    reading : ReadingRequest
    """

    def __init__(self, train, val, val_data, test, test_data, reading: ReadingRequest):
        self.train, self.val, self.val_data = train, val, val_data
        self.test_interval, self.test_data = test, test_data
        self.reading = reading

    def _read(self, paths) -> list:
        """The wells of ``paths`` (every sheet of a workbook, unless a sheet is named), with the stated units."""
        r = self.reading
        return [g for p in paths for g in read_wells(p, stated_units=parse_units(r.units), depth_column=r.depth_column,
                                                     sheet=r.sheet)]

    def _check(self, logs) -> None:
        """Validation and test wells checked against the training wells as predict checks a well."""
        for line in check_wells(self.train_logs_, logs, self.names_, window=self.window_):
            warn(line)

    def training_and_validation(self, data, names, target, window):
        """``(whole logs, training logs, validation logs)``; the test depths are checked, not read."""
        logs = self._read(data)
        common_depth_unit(logs)
        train_logs = [g.interval(*self.train[:2]) for g in logs]
        check_training_logs(logs, train_logs, names, target, window, self.train[2].split()[-1])
        self.train_logs_, self.names_, self.window_ = train_logs, [*names, target], window
        val_logs = self._part(logs, self.val, self.val_data)
        self._check(val_logs)
        if self.test_interval and not self.test_data:     # depths only: overlaps refused before any fit
            forecast_logs(logs, self.train[:2], self.test_interval[:2], labels=(self.train[2], self.test_interval[2]))
            if self.val and not self.val_data:
                forecast_logs(logs, self.val[:2], self.test_interval[:2], labels=(self.val[2], self.test_interval[2]))
        return logs, train_logs, val_logs

    def test(self, logs):
        """The test logs (read only when called: after the choice)."""
        test_logs = self._part(logs, self.test_interval, self.test_data)
        self._check(test_logs)
        if self.val and not self.val_data and not self.test_data:   # a depth shared with validation stays there
            test_logs = [forecast_logs([g], self.val[:2], (g.depth[0], g.depth[-1]),
                                       labels=(self.val[2], self.test_interval[2]))[0][0] for g in test_logs]
        return test_logs

    def _part(self, logs, interval, files):
        wells = self._read(files)
        common_depth_unit([*logs, *wells])
        held, _ = forecast_logs(logs, self.train[:2], None if interval is None else interval[:2], wells,
                                labels=(self.train[2], interval[2]) if interval else None)
        return held
