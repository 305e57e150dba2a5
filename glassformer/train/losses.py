"""Loss functions with explicit gradients: masked mean squared error and cross-entropy.

A loss object follows the forward/backward half of the module contract::

    value = loss.forward(pred, target)   # a Python float
    dpred = loss.backward()              # dL/dpred, same shape and dtype as pred

``backward`` before ``forward`` raises :class:`~glassformer.errors.NotReadyError`.

Non-finite *predictions* are not rejected: they give a non-finite loss, which the training
loop's divergence guard reports with the layer that produced them.  Non-finite *targets* are
rejected (except NaN in :class:`MSELoss`, which means "no observation here").
"""

from __future__ import annotations

import numpy as np

from .._validation import FLOAT_DTYPES
from ..errors import InputError, NotReadyError, ShapeError

__all__ = ["CrossEntropyLoss", "MSELoss", "log_softmax", "softmax"]

_REDUCTIONS = ("mean", "sum")


def _check_reduction(reduction, where):
    if reduction not in _REDUCTIONS:
        raise InputError(f"{where}: reduction must be 'mean' or 'sum', got {reduction!r}")
    return reduction


def _as_prediction(x, name: str, where: str) -> np.ndarray:
    """Float array (float64/float32 kept, ints converted to float64); NaN/inf allowed, empty not."""
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists
        raise InputError(f"{where}: {name} could not be converted to an array ({exc})") from None
    if arr.dtype.kind not in "fiub":
        raise InputError(f"{where}: {name} must be a numeric array, got dtype {arr.dtype}")
    if arr.dtype not in FLOAT_DTYPES:
        arr = arr.astype(np.float64)
    if arr.size == 0:
        raise InputError(f"{where}: {name} is empty (shape {arr.shape})")
    return arr


def log_softmax(x, axis: int = -1) -> np.ndarray:
    """Numerically stable ``log(softmax(x))`` along ``axis``: ``x - max - log(sum(exp(x - max)))``.

    Finite for any finite input (e.g. logits of ±1e4); ``-inf`` entries give ``-inf``.
    The dtype of a float64/float32 input is kept.
    """
    x = _as_prediction(x, "x", "log_softmax")
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0).astype(x.dtype, copy=False)  # rows of -inf stay -inf, not NaN
    shifted = x - m
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def softmax(x, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis`` (subtracts the maximum first); dtype kept."""
    x = _as_prediction(x, "x", "softmax")
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0).astype(x.dtype, copy=False)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


class _Loss:
    """Shared cache handling (the loss analogue of ``Module._save`` / ``_saved``)."""

    def __init__(self):
        self._grad = None

    def backward(self) -> np.ndarray:
        """Return dL/dpred for the last ``forward`` (a fresh array, pred's shape and dtype).

        Raises
        ------
        NotReadyError
            If ``forward`` has not been called.
        """
        if self._grad is None:
            raise NotReadyError(f"{type(self).__name__}.backward() called before forward()")
        return self._grad.copy()

    def __call__(self, *args, **kwargs) -> float:
        return self.forward(*args, **kwargs)


class MSELoss(_Loss):
    """Mean squared error that skips missing targets.

    ``L = sum_valid (pred - target)**2 / n_valid`` (``reduction="mean"``) or the plain sum
    (``"sum"``), where *valid* means the target is not NaN and, if given, ``mask`` is True.
    The gradient is ``2 (pred - target) / n_valid`` at valid entries and exactly 0 elsewhere.
    With every entry valid this is ``np.mean((pred - target)**2)`` and its gradient
    ``2.0 * (y_hat - y) / y.size``, the loss and gradient of the chapter (Pyrcz 2024).

    Parameters
    ----------
    reduction : {"mean", "sum"}, default "mean"

    Shapes
    ------
    ``pred`` and ``target``: the same shape, any rank, e.g. ``(batch, seq, n_targets)``;
    ``mask``: boolean, broadcastable to that shape (e.g. ``(batch, seq, 1)``), True = counts.

    Raises
    ------
    ShapeError
        If ``target`` does not have ``pred``'s shape or ``mask`` does not broadcast to it.
    InputError
        If ``target`` holds inf, ``mask`` is not boolean, or no entry is valid.
    """

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = _check_reduction(reduction, "MSELoss")
        self._diff = None

    def forward(self, pred, target, mask=None) -> float:
        """Return the loss as a Python float and keep what :meth:`backward` needs."""
        where = "MSELoss.forward"
        pred = _as_prediction(pred, "pred", where)
        target = _as_prediction(target, "target", where).astype(pred.dtype, copy=False)
        if target.shape != pred.shape:
            raise ShapeError(f"{where}: target has shape {target.shape}, expected pred's shape {pred.shape}")
        observed = np.isfinite(target)
        n = target.size
        if mask is not None or not observed.all():          # gaps, masks or bad targets: count what is valid
            if np.isinf(target).any():
                bad = tuple(int(i) for i in np.argwhere(np.isinf(target))[0])
                raise InputError(f"{where}: target contains inf (first at index {bad}); use NaN for missing values")
            if mask is not None:
                observed &= self._broadcast_mask(mask, pred.shape, where)
            n = int(np.count_nonzero(observed))
            if n == 0:
                raise InputError(f"{where}: no valid target to compare with (all {target.size} entries are NaN "
                                 "or masked out)")
        diff = pred - target
        if n != diff.size:
            diff = np.where(observed, diff, 0.0).astype(pred.dtype, copy=False)
        self._diff, self._n = diff, n
        value = np.sum(diff ** 2)
        return float(value / n if self.reduction == "mean" else value)

    def backward(self) -> np.ndarray:
        """dL/dpred: ``2 (pred - target) / n_valid`` (``"sum"``: without ``/ n_valid``), 0 where not valid."""
        if self._diff is None:
            raise NotReadyError("MSELoss.backward() called before forward()")
        grad = 2.0 * self._diff
        if self.reduction == "mean":
            grad /= self._n
        return grad

    @staticmethod
    def _broadcast_mask(mask, shape, where) -> np.ndarray:
        mask = np.asarray(mask)
        if mask.dtype != np.bool_:
            raise InputError(f"{where}: mask must be boolean (True = counts), got dtype {mask.dtype}")
        try:
            return np.broadcast_to(mask, shape)
        except ValueError:
            raise ShapeError(f"{where}: mask of shape {mask.shape} does not broadcast to pred's shape {shape}") from None

    def __repr__(self) -> str:
        return f"MSELoss(reduction={self.reduction!r})"


class CrossEntropyLoss(_Loss):
    """Cross-entropy from logits with label smoothing and an ignored class id (PyTorch's formula).

    For each non-ignored position with log-probabilities ``logp = log_softmax(logits)`` and
    target class ``t``, the target distribution is ``q = (1 - eps) * onehot(t) + eps / C``
    (label smoothing, Szegedy et al., 2016, section 7) and the loss is ``-sum_c q_c logp_c``,
    i.e. ``(1 - eps) * nll + eps * mean_c(-logp_c)``.  ``"mean"`` divides the sum by the number
    of non-ignored positions (as ``torch.nn.functional.cross_entropy``), ``"sum"`` does not.
    The gradient is ``(softmax(logits) - q) / n_valid``, exactly 0 at ignored positions.

    Parameters
    ----------
    ignore_index : int, default -100
        Targets equal to it (padding) contribute nothing.
    label_smoothing : float in [0, 1], default 0
    reduction : {"mean", "sum"}, default "mean"

    Shapes
    ------
    ``logits``: ``(..., C)``, e.g. ``(batch, seq, vocab)``; ``target``: integers of shape ``(...)``.

    Raises
    ------
    ShapeError
        If ``target.shape != logits.shape[:-1]``.
    InputError
        If targets are not integers, a target is outside ``[0, C)`` and not ``ignore_index``,
        or every position is ignored.
    """

    def __init__(self, ignore_index: int = -100, label_smoothing: float = 0.0, reduction: str = "mean"):
        super().__init__()
        if isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer)):
            raise InputError(f"CrossEntropyLoss: ignore_index must be an integer, got {ignore_index!r}")
        self.ignore_index = int(ignore_index)
        try:
            eps = float(label_smoothing)
        except (TypeError, ValueError):
            eps = float("nan")
        if not 0.0 <= eps <= 1.0:
            raise InputError(f"CrossEntropyLoss: label_smoothing must be in [0, 1], got {label_smoothing!r}")
        self.label_smoothing = eps
        self.reduction = _check_reduction(reduction, "CrossEntropyLoss")

    def forward(self, logits, target) -> float:
        """Return the loss as a Python float and keep the gradient for :meth:`backward`."""
        where = "CrossEntropyLoss.forward"
        logits = _as_prediction(logits, "logits", where)
        target = np.asarray(target)
        if target.dtype.kind not in "iu":
            raise InputError(f"{where}: target must hold integer class ids, got dtype {target.dtype}")
        if logits.ndim < 1 or target.shape != logits.shape[:-1]:
            raise ShapeError(f"{where}: target has shape {target.shape}, expected logits.shape[:-1] = "
                             f"{logits.shape[:-1]} (logits shape {logits.shape})")
        n_classes = logits.shape[-1]
        valid = target != self.ignore_index
        bad = valid & ((target < 0) | (target >= n_classes))
        if bad.any():
            i = tuple(int(k) for k in np.argwhere(bad)[0])
            raise InputError(f"{where}: target {int(target[i])} at index {i} is outside [0, {n_classes}) "
                             f"and is not ignore_index ({self.ignore_index})")
        n = int(np.count_nonzero(valid))
        if n == 0:
            raise InputError(f"{where}: every target equals ignore_index ({self.ignore_index}); nothing to learn from")

        # One exp pass serves the loss and the gradient: logp = shifted - log(sum e), softmax = e / sum e.
        m = np.max(logits, axis=-1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0).astype(logits.dtype, copy=False)
        logp = logits - m
        e = np.exp(logp)
        s = e.sum(axis=-1, keepdims=True)
        logp -= np.log(s)
        safe_t = np.where(valid, target, 0)[..., None]
        nll = -np.take_along_axis(logp, safe_t, axis=-1)[..., 0]
        eps = self.label_smoothing
        # PyTorch's order: reduce the NLL and the smoothing term separately, then mix.
        nll_sum = np.sum(np.where(valid, nll, 0.0))
        smooth_sum = np.sum(np.where(valid, -np.sum(logp, axis=-1), 0.0)) if eps else 0.0
        denom = n if self.reduction == "mean" else 1
        value = (1.0 - eps) * (nll_sum / denom) + (smooth_sum / denom) * (eps / n_classes)

        grad = e
        grad /= s
        if eps:
            grad -= eps / n_classes
        np.put_along_axis(grad, safe_t, np.take_along_axis(grad, safe_t, axis=-1) - (1.0 - eps), axis=-1)
        if denom != 1:
            grad /= denom
        # assignment, not a 0/1 multiply, so ignored rows are exactly 0 even for non-finite logits there.
        grad[~valid] = 0.0
        self._grad = grad
        return float(value)

    def __repr__(self) -> str:
        return (f"CrossEntropyLoss(ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, "
                f"reduction={self.reduction!r})")
