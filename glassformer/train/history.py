"""The per-epoch record of a training run (:class:`History`), saved with models and checkpoints."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["History"]


@dataclass
class History:
    """Per-epoch record of a training run.

    Attributes
    ----------
    epoch : list of int
        Epoch numbers, starting at 0.
    train_loss : list of float
        Mean of the epoch's mini-batch losses (before each batch's update).
    val_loss : list of float
        Validation loss after the epoch (NaN when there is no validation data).
    lr : list of float
        Learning rate of the epoch's last update.
    best_epoch : int or None
        Epoch whose parameters were kept by early stopping (None without early stopping).
    stop_reason : str
        ``"completed"``, ``"early_stopping"``, ``"callback"``, ``"diverged"`` or ``"interrupted"``.
    seconds : float
        Wall-clock duration of ``fit``.
    """

    epoch: list = field(default_factory=list)
    train_loss: list = field(default_factory=list)
    val_loss: list = field(default_factory=list)
    lr: list = field(default_factory=list)
    best_epoch: int | None = None
    stop_reason: str = "completed"
    seconds: float = 0.0

    def to_dict(self) -> dict:
        """JSON-ready copy (NaN becomes None)."""
        def clean(xs):
            return [None if (isinstance(x, float) and not math.isfinite(x)) else x for x in xs]
        return {"epoch": list(self.epoch), "train_loss": clean(self.train_loss),
                "val_loss": clean(self.val_loss), "lr": list(self.lr), "best_epoch": self.best_epoch,
                "stop_reason": self.stop_reason, "seconds": self.seconds}

    @classmethod
    def from_dict(cls, d: dict) -> "History":
        nan = float("nan")
        return cls(epoch=list(d.get("epoch", [])),
                   train_loss=[nan if x is None else x for x in d.get("train_loss", [])],
                   val_loss=[nan if x is None else x for x in d.get("val_loss", [])],
                   lr=list(d.get("lr", [])), best_epoch=d.get("best_epoch"),
                   stop_reason=d.get("stop_reason", "completed"), seconds=d.get("seconds", 0.0))

    def __len__(self) -> int:
        return len(self.epoch)
