"""``glassformer compare`` as a request the library checks, plans and runs.

The command line fills a :class:`CompareRequest` and hands it here; :func:`plan_compare` applies
every rule (a demonstration's data or the user's wells, not both; what a demonstration cannot
take), reads the wells and builds the transformer before any file is written, and
:func:`run_compare` runs the plan through :func:`~glassformer.wells.compare_wells`: the
transformer and a bidirectional LSTM on identical windows, seeds and loop, beside the baselines.
A ``"demo"`` plan is run by the demonstrations' catalogue (the command line finds it).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from ..errors import InputError
from ..models import SequenceRegressor
from ..parallel import make_engine
from ..runs import check_out_folder
from .dataset import WellDataset
from .experiment import compare_wells, seed_list
from .option_values import implied_d_model, input_names, positional_options
from .requests import EngineRequest, ReadingRequest, WellsRequest
from .train_job import attribution_of, read_dataset, test_logs_of

__all__ = ["ComparePlan", "CompareRequest", "plan_compare", "run_compare"]


@dataclass(frozen=True)
class CompareRequest:
    """``glassformer compare``: the transformer, a bidirectional LSTM and the baselines on one split.

    Attributes
    ----------
    out : str
        The run folder.
    demo_name : str or None
        A demonstration's data (``"porosity"``, ``"synthetic-wells"``, ``"real-wells"``) instead of ``wells``.
    inputs, target, log_target :
        Input curves (the first is porosity), target curve, whether log10 of it is modelled.
    window, stride, epochs, hidden_size :
        Samples per window, step between training windows, most epochs of both networks (None: 30
        on wells, the demo's own with ``demo_name``), the LSTM's hidden size per direction.
    positional, wavelengths :
        The transformer's positional encoding (positions are sample indices).
    n_seeds : int or None
        Seeds 42, 0, 1, ... (None: 1 on wells, the demo's own count with ``demo_name``).
    """

    out: str
    demo_name: str | None = None
    inputs: tuple = ()
    target: str | None = None
    log_target: bool = False
    wells: WellsRequest = field(default_factory=WellsRequest)
    reading: ReadingRequest = field(default_factory=ReadingRequest)
    window: int = 32
    stride: int | None = None
    epochs: int | None = None
    hidden_size: int = 16
    positional: str = "sinusoidal"
    wavelengths: tuple = ()
    n_seeds: int | None = None
    overwrite: bool = False
    progress: bool = False
    engine: EngineRequest = field(default_factory=EngineRequest)

    @classmethod
    def from_options(cls, params: Mapping[str, Any]) -> "CompareRequest":
        """The request of ``glassformer compare``'s option values (click's ``ctx.params``)."""
        plain = {f.name: params[f.name] for f in fields(cls) if f.name in params}
        plain.update({k: tuple(v) for k, v in plain.items() if isinstance(v, list)})
        return cls(**{**plain, "out": str(params["out"]), "wells": WellsRequest.pick(params),
                      "reading": ReadingRequest.pick(params), "engine": EngineRequest.pick(params)})


@dataclass
class ComparePlan:
    """A checked ``compare`` request: ``kind`` ``"demo"`` (run by the demonstrations' catalogue with
    ``seeds``) or ``"wells"`` (:func:`run_compare`), with the inputs, the transformer and the wells read."""

    request: CompareRequest
    kind: str
    seeds: list | None = None
    names: list = field(default_factory=list)
    model: Any = None
    dataset: WellDataset | None = None
    test_logs: list = field(default_factory=list)


def plan_compare(request: CompareRequest) -> ComparePlan:
    """Check ``request`` whole and read its wells; nothing is written.

    Raises
    ------
    InputError
        A non-empty ``--out`` without ``--overwrite``; ``--demo`` with wells, engines or positional
        options; wells without inputs or target; an engine with one seed (nothing to run in
        parallel); positional options that do not fit.
    """
    check_out_folder(request.out, overwrite=request.overwrite)   # created once the inputs are valid
    wells = request.wells
    if request.demo_name:
        if wells.data or wells.manifest:
            raise InputError("give either --demo or --data / --manifest, not both")
        if request.engine.jobs or request.engine.scheduler:
            raise InputError("--jobs / --scheduler apply to --data runs; a --demo runs its seeds in this process")
        if request.positional != "sinusoidal" or request.wavelengths:
            raise InputError("--positional / --wavelengths apply to --data runs; a --demo uses its own model")
        return ComparePlan(request, "demo", seeds=seed_list(request.n_seeds) if request.n_seeds else None)
    missing = [name for name, v in (("--data", wells.data or wells.manifest), ("--inputs", request.inputs),
                                    ("--target", request.target)) if not v]
    if missing:
        raise InputError(f"compare needs {', '.join(missing)} (or --demo NAME)")
    if ((request.engine.jobs or 1) > 1 or request.engine.scheduler) and (request.n_seeds or 1) == 1:
        raise InputError("--jobs / --scheduler run the seeds in parallel, and one seed (the default on --data) leaves "
                         "nothing to share out: add --seeds N (N > 1), or leave --jobs out")
    names = input_names(request.inputs)
    opts = positional_options(request.positional, request.wavelengths, "index", request.window, None)
    model = SequenceRegressor(positional=request.positional, positional_options=opts)
    if implied_d_model(request.positional, opts) is not None:       # e.g. 2 x the number of wavelengths
        model.set_params(d_model=implied_d_model(request.positional, opts))
    ds = read_dataset(wells, request.reading, inputs=names, target=request.target, window=request.window)
    return ComparePlan(request, "wells", seeds=seed_list(request.n_seeds or 1), names=names, model=model,
                       dataset=ds, test_logs=test_logs_of(ds))


def run_compare(plan: ComparePlan) -> dict:
    """Run a ``"wells"`` plan of :func:`plan_compare` (its seeds on the request's engine); returns the metrics.

    Raises
    ------
    InputError
        A ``"demo"`` plan (the demonstrations' catalogue runs those).
    """
    if plan.kind != "wells":
        raise InputError("run_compare runs a comparison on wells; a --demo runs through the demonstrations")
    r, ds = plan.request, plan.dataset
    config = {k: (list(map(str, v)) if isinstance(v, tuple) else v)
              for k, v in (("data", r.wells.data), ("manifest", r.wells.manifest), ("train_depth", r.wells.train_depth),
                           ("test_depth", r.wells.test_depth), ("test_data", r.wells.test_data),
                           ("val_data", r.wells.validation_data), ("aliases", r.wells.aliases))}
    with make_engine(jobs=r.engine.jobs, scheduler=r.engine.scheduler) as engine:
        return compare_wells(r.out, ds.train, plan.test_logs, inputs=plan.names, target=r.target,
                             log_target=r.log_target, window=r.window, stride=r.stride, epochs=r.epochs or 30,
                             seeds=plan.seeds, hidden_size=r.hidden_size, boundary=ds.boundary,
                             attribution=attribution_of([*ds.train, *ds.val, *ds.test]), model=plan.model,
                             progress=r.progress, val_logs=ds.val, validation=r.wells.validation_split,
                             engine=engine, config={**config, "curves_used": ds.curves_used})
