"""The members of a deep ensemble trained side by side, as one model with a leading member axis.

A small model spends its training on calls, not arithmetic: demonstration 2's arrays hold a few
hundred numbers, the well model's a few tens of thousands, and NumPy's fixed cost per call is a
large part of every step.  The K members of an ensemble (Lakshminarayanan, Pritzel and Blundell,
2017) are the same model from K seeds, so trained one after another they pay that cost K times.
:func:`fit_members` pays it about once:

* :func:`stack_members` makes one network whose every parameter has a leading member axis
  ``(K, ...)``; the members' own parameters become views of it (member k's of row k, each member's
  parameters contiguous in its row, the flat layout its optimizer updates in one go);
* each step, the members' batches go through that network together, with the member axis leading
  every activation; the kernels of :mod:`glassformer.nn.functional` then make, per member, the very
  BLAS calls and element-wise operations a model alone makes;
* each member keeps its own :class:`~glassformer.train.Trainer` -- its shuffling, validation split,
  optimizer, gradient clipping, early stopping and divergence guard -- running its loop
  (:meth:`Trainer.run <glassformer.train.Trainer.run>`) in lock step with the others; their
  requests for a training step or a validation loss are answered together.

So every member's parameters, losses and predictions are bit for bit those of fitting it alone
(the tests compare them), at a cost well under K fits.  A member that stops early keeps its best
parameters while the others go on (its rows are still computed, and discarded).

What can be stacked: :class:`~glassformer.models.SequenceRegressor` models that differ only in
``random_state`` (and ``progress``), with a linear input embedding, a parameter-free positional
encoding added to the embeddings, the attention mixer and no dropout.  Anything else raises
:class:`~glassformer.errors.InputError`; fit such members one by one (``model.fit``).
"""

from __future__ import annotations

import copy

import numpy as np

from ..errors import InputError
from ..nn.positional import get_spec
from ..nn.tiers import kernels
from .estimator import masked_mse

__all__ = ["fit_members", "side_by_side_refusal", "stack_members"]


def stack_members(nets: list):
    """One network holding the parameters of ``nets`` (same architecture) along a new first axis.

    Parameter ``p`` of the result has shape ``(K,) + p.shape``; afterwards each member's ``p.data``
    and ``p.grad`` are views of its row, so training the stack trains the members.  A row holds its
    member's parameters in order, without gaps: the flat layout (:mod:`glassformer.nn.flat`) with
    which an optimizer built afterwards updates, zeroes and clips the member as it would alone.
    """
    stacked = copy.deepcopy(nets[0])
    stacked.check_inputs = False                  # the members' estimators checked the data
    own = [p for _, p in stacked.named_parameters()]
    members = [[p for _, p in net.named_parameters()] for net in nets]
    size = sum(p.size for p in own)
    data = np.empty(len(nets) * size, dtype=own[0].dtype).reshape(len(nets), size)   # rows of one 1-D array
    grad = np.zeros(len(nets) * size, dtype=own[0].dtype).reshape(len(nets), size)
    start = 0
    for i, p in enumerate(own):
        end = start + p.size
        for k, params in enumerate(members):
            q = params[i]
            data[k, start:end] = q.data.ravel()
            q.data, q.grad = data[k, start:end].reshape(q.shape), grad[k, start:end].reshape(q.shape)
        shape = (len(nets),) + p.shape
        p.data, p.grad = data[:, start:end].reshape(shape), grad[:, start:end].reshape(shape)
        start = end
    return stacked


def side_by_side_refusal(model) -> str | None:
    """Why models with ``model``'s settings cannot be trained side by side (None when they can).

    A fitted or built ``model`` is also checked for a positional encoding with parameters.
    """
    kind = type(model).__name__
    if kind != "SequenceRegressor":
        return f"only SequenceRegressor models are trained side by side, got {kind}"
    spec = get_spec(model.positional, "positional")
    if model.input_embedding != "linear" or model.mixer != "attention" or model.dropout or spec.kind == "per_head" \
            or spec.name in ("learned",) or model.warm_start:
        return ("side by side needs input_embedding='linear', mixer='attention', dropout=0, a "
                "fixed positional encoding and no warm_start; fit these models one by one")
    network = getattr(model, "network_", None)
    if network is not None and network.trainable_positions:
        return "a trainable positional encoding cannot be trained side by side"
    return None


def _check_stackable(models: list) -> None:
    """Raise InputError unless ``models`` can be trained as one (see the module docstring)."""
    where = "fit_members"
    if len(models) < 1:
        raise InputError(f"{where}: no models to fit")
    first = models[0]
    if any(type(m) is not type(first) for m in models):
        raise InputError(f"{where}: only SequenceRegressor models are trained side by side, got {type(first).__name__}")
    settings = {k: v for k, v in first.get_params().items() if k not in ("random_state", "progress")}
    for m in models[1:]:
        if {k: v for k, v in m.get_params().items() if k not in ("random_state", "progress")} != settings:
            raise InputError(f"{where}: the models must differ only in random_state")
    refusal = side_by_side_refusal(first)
    if refusal is not None:
        raise InputError(f"{where}: {refusal}")


def fit_members(models: list, X, y, positions=None, *, X_val=None, y_val=None, positions_val=None) -> list:
    """Fit every model of ``models`` on the same windows, side by side (see the module docstring).

    Arguments as :meth:`SequenceRegressor.fit <glassformer.models.SequenceRegressor.fit>`; each
    model splits its own validation windows (``validation_fraction`` with its ``random_state``)
    when no ``X_val`` is given.  Returns ``models``, each fitted exactly as ``model.fit`` would.

    Raises
    ------
    InputError
        Models that cannot be trained side by side, or bad data (as ``fit``).
    DivergenceError
        A member diverged (as its ``fit`` would).
    """
    _check_stackable(models)
    where = "fit_members"
    data = [m._prepare_fit(X, y, positions, X_val, y_val, positions_val, where) for m in models]
    if any(m.network_.trainable_positions for m in models):
        raise InputError(f"{where}: a trainable positional encoding cannot be trained side by side")
    stacked = stack_members([m.network_ for m in models])     # before the optimizers: they see the rows
    trainers = [m._trainer(train, val, handle_signals=False) for m, (train, val) in zip(models, data)]
    runs = [t.run(m._batches(train), None if val is None else m._batches(val))
            for m, t, (train, val) in zip(models, trainers, data)]
    errors = np.geterr()                            # the loops' errstate blocks interleave: restore it after
    try:
        with kernels(models[0].kernels), stacked.fixed_positions(models[0]._positions):   # the members' tier
            _lock_step(models, stacked, runs)
    finally:
        np.seterr(**errors)
        for run in runs:
            run.close()
        for m in models:
            m._finish_fit()
            m.network_.flatten_parameters()      # each member its own arrays again, apart from the stack
    for m in models:
        m.is_fitted_ = True
    return models


def _lock_step(models, stacked, runs) -> None:
    """Answer the members' requests together until every loop has ended.

    A member whose loop has ended still has rows in the stack: they are computed on a running
    member's data and their results are dropped (its parameters, restored by early stopping, no
    longer change).
    """
    requests = [_advance(run, None) for run in runs]
    while any(r is not None for r in requests):
        kind, donor = next(r for r in requests if r is not None)
        if any(r is not None and r[0] != kind for r in requests):     # pragma: no cover - same loop shapes
            raise RuntimeError("fit_members: the members' training loops fell out of step")
        running = [r is not None for r in requests]
        data = [donor if r is None else r[1] for r in requests]
        try:
            answers = (_joint_step if kind == "step" else _joint_eval)(models, stacked, data, running)
        except Exception as exc:                    # the stack failed: every running member sees it
            answers = [exc] * len(models)
        requests = [None if r is None else _advance(run, a) for r, run, a in zip(requests, runs, answers)]


def _advance(run, answer):
    """Send ``answer`` (a loss, or an exception to raise at the request) and return the next request or None."""
    try:
        return run.throw(answer) if isinstance(answer, BaseException) else run.send(answer)
    except StopIteration:
        return None


def _positions(models, batches):
    """The shared window positions, or the members' per-window positions stacked ``(K, batch, seq)``."""
    if all(b[2] is None for b in batches):
        return models[0]._positions
    return np.stack([m._positions if b[2] is None else b[2] for m, b in zip(models, batches)])


def _joint_step(models, stacked, batches, running) -> list:
    """Forward, each member's masked MSE and one backward for all members; the members' losses."""
    y_hat = stacked(np.stack([b[0] for b in batches]), _positions(models, batches))   # (K, batch, seq, n_targets)
    losses, grads = [], []
    for m, b, pred, run in zip(models, batches, y_hat, running):
        if not run or (not m._each_window_observed and not np.isfinite(b[1]).any()):   # as _train_step
            losses.append(0.0)
            grads.append(np.zeros_like(pred))
            continue
        losses.append(m._loss.forward(pred, b[1]))
        grads.append(m._loss.backward())
    stacked.backward(np.stack(grads))
    return losses


def _joint_eval(models, stacked, datas, running, chunk: int = 256) -> list:
    """Each member's validation loss (its ``_eval_step``), from one evaluation pass of the stack."""
    X = np.stack([d[0] for d in datas])
    positions = _positions(models, datas)
    shared = positions is None or np.ndim(positions) == 1
    stacked.eval()
    try:
        with stacked.no_cache():
            parts = [stacked(X[:, s:s + chunk], positions if shared else positions[:, s:s + chunk])
                     for s in range(0, X.shape[1], chunk)]
    finally:
        stacked.train()
    pred = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
    return [None if not run else masked_mse(p, d[1]) if np.isfinite(p).all() else
            FloatingPointError("non-finite predictions") for p, d, run in zip(pred, datas, running)]
