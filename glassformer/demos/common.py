"""What the demos share beyond the library: their quick/full settings and a BLAS thread limit."""

from __future__ import annotations

from contextlib import nullcontext

from threadpoolctl import threadpool_limits

from ..errors import InputError

__all__ = ["demo_settings", "limit_blas_threads"]


def demo_settings(where: str, quick: bool, quick_cfg: dict, full_cfg: dict, overrides: dict) -> dict:
    """The quick or full settings of a demo with ``overrides`` applied.

    Raises
    ------
    InputError
        If an override names a setting the demo does not have (the message lists the known ones).
    """
    cfg = dict(quick_cfg if quick else full_cfg)
    unknown = set(overrides) - set(cfg)
    if unknown:
        raise InputError(f"{where}: unknown setting(s) {sorted(unknown)}; known: {sorted(cfg)}")
    cfg.update(overrides)
    return cfg


def limit_blas_threads(n: int | None):
    """Context manager limiting BLAS to ``n`` threads (None: no change), via threadpoolctl.

    The demos' matrices are small (d_model 64-128), so a second BLAS thread gains little on an idle
    machine, while oversubscribed threads (other processes on the same cores) were measured to slow
    training down more than tenfold.
    """
    if n is None:
        return nullcontext()
    return threadpool_limits(limits=int(n), user_api="blas")
