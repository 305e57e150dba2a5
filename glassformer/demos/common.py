"""What the demos share beyond the library: their quick/full settings."""

from __future__ import annotations

from ..errors import InputError

__all__ = ["demo_settings"]


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
