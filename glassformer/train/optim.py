"""Optimizers, in NumPy (gradient clipping: :mod:`glassformer.train.clipping`).

Every optimizer works on the :class:`~glassformer.nn.Parameter` objects of a model and
updates ``p.data`` **in place** (arrays are never rebound, so views held elsewhere, e.g.
tied weights, stay valid).  The update formulas are PyTorch's (``torch.optim.SGD``,
``Adam``, ``AdamW``) evaluated in the same order, so a run matches PyTorch to rounding.  When the
parameters lie in one flat array (``Module.flatten_parameters``, :mod:`glassformer.nn.flat`) the
formulas run once over that array: the same arithmetic per element in a few calls.

Typical loop (what :class:`~glassformer.train.Trainer` runs for you)::

    opt = Adam(model.named_parameters(), lr=1e-3)
    sched = Scheduler(opt, WarmupCosine(1e-3, warmup_steps=100, total_steps=5000))
    for batch in batches:
        opt.zero_grad()
        loss.forward(model(x), y); model.backward(loss.backward())
        clip_grad_norm(opt.params, 1.0)
        opt.step(); sched.step()

Learning-rate schedules are in :mod:`glassformer.train.schedules`.  Optimizer state round-trips
through ``state_dict()`` / ``load_state_dict()`` as plain ndarrays, numbers, strings and lists,
so a checkpoint is an ``.npz`` plus JSON (see :func:`glassformer.io.save_checkpoint`).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError, StateDictError
from ..nn.flat import flat_view
from ..nn.module import Parameter
from ._checks import check_number, named_params
from .clipping import clip_global_norm, clip_grad_norm  # noqa: F401  (here too, where they always were)

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "clip_global_norm", "clip_grad_norm", "make_optimizer"]

# --------------------------------------------------------------------------- optimizers
class Optimizer:
    """Base class: parameter bookkeeping, ``lr``, ``zero_grad`` and state (de)serialisation.

    Subclasses declare ``_buffers`` (names of per-parameter state arrays) and
    ``_hyper`` (names of hyperparameters) and implement ``_update(p, state)``.

    Attributes
    ----------
    params : list of Parameter
        The optimised parameters, each once (tied weights are deduplicated).
    param_names : list of str
        Their names (qualified names from ``named_parameters()``, else ``"0"``, ``"1"``, ...).
    state : list of dict
        Per-parameter buffers (ndarrays of the parameter's shape and dtype; views of one flat
        array per buffer when the parameters lie in a flat array).
    step_count : int
        Number of ``step()`` calls so far (PyTorch's ``state['step']``).
    """

    _buffers: tuple[str, ...] = ()
    _hyper: tuple[str, ...] = ("lr",)

    def __init__(self, params, lr):
        where = type(self).__name__
        named = named_params(params, where)
        self.param_names = [n for n, _ in named]
        self.params = [p for _, p in named]
        self._lr = check_number(lr, "lr", where, strict=True)
        self.step_count = 0
        self.state = [{b: np.zeros_like(p.data) for b in self._buffers} for p in self.params]
        self._flat, self._flat_state = flat_view(self.params), {}
        if self._flat is not None:               # the buffers tile flat arrays too: one update per step
            for b in self._buffers:
                self._flat_state[b] = np.zeros_like(self._flat.data)
                for st, view in zip(self.state, self._flat.split(self._flat_state[b])):
                    st[b] = view

    def fused(self):
        """The parameters' :class:`~glassformer.nn.flat.FlatView` while it holds, else None."""
        flat = self._flat
        return flat if flat is not None and flat.is_current() else None

    @property
    def lr(self) -> float:
        """Learning rate used by the next ``step()``; schedulers set it (finite, >= 0)."""
        return self._lr

    @lr.setter
    def lr(self, value) -> None:
        self._lr = check_number(value, "lr", type(self).__name__)

    def zero_grad(self) -> None:
        """Set every parameter's ``.grad`` to zero, in place."""
        flat = self.fused()
        for g in [flat.grad] if flat is not None else [p.grad for p in self.params]:
            g.fill(0.0)

    def step(self) -> None:
        """Apply one update to every parameter from its current ``.grad`` (all at once when flat)."""
        self.step_count += 1
        flat = self.fused()
        if flat is not None:
            self._update(flat, self._flat_state)
            return
        for p, st in zip(self.params, self.state):
            self._update(p, st)

    def _update(self, p: Parameter, state: dict) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def hyperparameters(self) -> dict:
        """The hyperparameters as a JSON-able dict (tuples become lists)."""
        out = {}
        for k in self._hyper:
            v = getattr(self, k)
            out[k] = list(v) if isinstance(v, tuple) else v
        return out

    def state_dict(self) -> dict:
        """Return the full optimizer state as plain data.

        Returns
        -------
        dict
            ``{"type": class name, "hyperparameters": {...}, "step": int,
            "param_names": [...], "arrays": {"<param name>/<buffer>": ndarray copy}}``.
            Everything but ``arrays`` is JSON-able.
        """
        arrays = {f"{n}/{b}": st[b].copy()
                  for n, st in zip(self.param_names, self.state) for b in self._buffers}
        return {"type": type(self).__name__, "hyperparameters": self.hyperparameters(),
                "step": int(self.step_count), "param_names": list(self.param_names), "arrays": arrays}

    def load_state_dict(self, state: dict) -> None:
        """Restore a state produced by :meth:`state_dict` (hyperparameters, step, buffers).

        Raises
        ------
        StateDictError
            If the optimizer type, parameter names or buffer shapes differ; nothing is changed then.
        """
        where = f"{type(self).__name__}.load_state_dict"
        try:
            kind, hyper, step = state["type"], dict(state["hyperparameters"]), state["step"]
            names, arrays = list(state["param_names"]), dict(state["arrays"])
        except (KeyError, TypeError, ValueError) as exc:
            raise StateDictError(f"{where}: not an optimizer state dict ({exc!r} missing or malformed)") from None
        if kind != type(self).__name__:
            raise StateDictError(f"{where}: state is for optimizer {kind!r}, not {type(self).__name__!r}")
        if names != self.param_names:
            missing = [n for n in self.param_names if n not in names]
            unexpected = [n for n in names if n not in self.param_names]
            raise StateDictError(f"{where}: parameter names differ (missing {missing}, unexpected {unexpected}"
                                 f"{', order differs' if not (missing or unexpected) else ''})")
        new_state = []
        for n, p in zip(self.param_names, self.params):
            st = {}
            for b in self._buffers:
                key = f"{n}/{b}"
                if key not in arrays:
                    raise StateDictError(f"{where}: missing array {key!r}")
                a = np.asarray(arrays[key])
                if a.shape != p.shape:
                    raise StateDictError(f"{where}: {key!r} has shape {a.shape}, expected {p.shape}")
                st[b] = a.astype(p.dtype, copy=True)
            new_state.append(st)
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0:
            raise StateDictError(f"{where}: step must be an integer >= 0, got {step!r}")
        unknown = sorted(set(hyper) - set(self._hyper))
        if unknown:
            raise StateDictError(f"{where}: unknown hyperparameters {unknown}")
        # Validate every hyperparameter on a scratch optimizer before changing anything.
        kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in hyper.items() if k != "lr"}
        try:
            scratch = type(self)([Parameter(np.zeros(1))], lr=1.0, **kwargs)
            scratch.lr = hyper.get("lr", self.lr)
        except InputError as exc:
            raise StateDictError(f"{where}: invalid hyperparameter in state ({exc})") from None
        for k in self._hyper:
            setattr(self, k, getattr(scratch, k))
        self.step_count = int(step)
        for st, new in zip(self.state, new_state):      # into the buffers: they may be views of flat arrays
            for b in self._buffers:
                st[b][...] = new[b]

    def __repr__(self) -> str:
        hp = ", ".join(f"{k}={v!r}" for k, v in self.hyperparameters().items())
        return f"{type(self).__name__}({hp}, n_params={len(self.params)}, step={self.step_count})"


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum, Nesterov momentum and L2 weight decay.

    PyTorch's ``torch.optim.SGD`` formulas: with ``g = grad + weight_decay * p``,
    the momentum buffer is ``b = g`` on the first step and ``b = momentum * b + (1 - dampening) * g``
    afterwards; the step direction is ``g + momentum * b`` (Nesterov) or ``b``; ``p -= lr * direction``.
    With ``momentum=0`` this is plain gradient descent ``p -= lr * g`` (the chapter's update, Pyrcz 2024).

    Parameters
    ----------
    params : Module, iterable of Parameter, or iterable of (name, Parameter)
    lr : float > 0
    momentum : float >= 0, default 0
    weight_decay : float >= 0, default 0
        L2 penalty added to the gradient (coupled decay).
    nesterov : bool, default False
        Nesterov momentum (Sutskever et al., 2013, eq. 3-4 in PyTorch's form); needs
        ``momentum > 0`` and ``dampening == 0``.
    dampening : float in [0, 1], default 0

    Raises
    ------
    InputError
        On an out-of-range hyperparameter (the message names it) or an empty ``params``.
    """

    _buffers = ("momentum_buffer",)
    _hyper = ("lr", "momentum", "weight_decay", "nesterov", "dampening")

    def __init__(self, params, lr, momentum=0.0, weight_decay=0.0, nesterov=False, dampening=0.0):
        super().__init__(params, lr)
        self.momentum = check_number(momentum, "momentum", "SGD")
        self.weight_decay = check_number(weight_decay, "weight_decay", "SGD")
        self.dampening = check_number(dampening, "dampening", "SGD", below=1.0 + 1e-12)
        self.nesterov = bool(nesterov)
        if self.nesterov and (self.momentum <= 0 or self.dampening != 0):
            raise InputError("SGD: nesterov=True requires momentum > 0 and dampening = 0, "
                             f"got momentum={momentum!r}, dampening={dampening!r}")

    def _update(self, p, state):
        g = p.grad
        if self.weight_decay != 0:
            g = g + self.weight_decay * p.data
        if self.momentum != 0:
            buf = state["momentum_buffer"]
            if self.step_count == 1:
                buf[...] = g
            else:
                buf *= self.momentum
                buf += (1.0 - self.dampening) * g
            g = g + self.momentum * buf if self.nesterov else buf
        p.data -= self.lr * g


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015, Algorithm 1), evaluated exactly as ``torch.optim.Adam``.

    With ``g = grad + weight_decay * p`` (coupled L2), at step ``t``::

        m = beta1 * m + (1 - beta1) * g          (as torch's lerp: m += (1 - beta1) * (g - m))
        v = beta2 * v + (1 - beta2) * g * g
        denom = sqrt(v) / sqrt(1 - beta2**t) + eps
        p -= (lr / (1 - beta1**t)) * m / denom

    so ``eps`` is added after the square root of the bias-corrected ``v``, as in PyTorch.

    Parameters
    ----------
    params : Module, iterable of Parameter, or iterable of (name, Parameter)
    lr : float > 0, default 1e-3
    betas : (float, float) in [0, 1), default (0.9, 0.999)
    eps : float >= 0, default 1e-8
    weight_decay : float >= 0, default 0

    Raises
    ------
    InputError
        On an out-of-range hyperparameter (the message names it) or an empty ``params``.
    """

    _buffers = ("exp_avg", "exp_avg_sq")
    _hyper = ("lr", "betas", "eps", "weight_decay")
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr)
        where = type(self).__name__
        try:
            b1, b2 = betas
        except (TypeError, ValueError):
            raise InputError(f"{where}: betas must be a pair (beta1, beta2), got {betas!r}") from None
        self.betas = (check_number(b1, "betas[0]", where, below=1.0),
                      check_number(b2, "betas[1]", where, below=1.0))
        self.eps = check_number(eps, "eps", where)
        self.weight_decay = check_number(weight_decay, "weight_decay", where)

    def _update(self, p, state):
        beta1, beta2 = self.betas
        m, v = state["exp_avg"], state["exp_avg_sq"]
        g = p.grad
        if self.weight_decay != 0:
            if self._decoupled:
                p.data *= 1.0 - self.lr * self.weight_decay
            else:
                g = g + self.weight_decay * p.data
        # torch.lerp evaluates from the nearer end, which fixes the rounding we must match.
        w = 1.0 - beta1
        if w < 0.5:
            m += w * (g - m)
        else:
            m[...] = g - (g - m) * (1.0 - w)
        v *= beta2
        v += ((1.0 - beta2) * g) * g
        t = self.step_count
        step_size = self.lr / (1.0 - beta1 ** t)
        denom = np.sqrt(v) / math.sqrt(1.0 - beta2 ** t)
        denom += self.eps
        p.data -= step_size * (m / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter, 2019, Algorithm 2), as ``torch.optim.AdamW``.

    Before the Adam step the parameter is shrunk: ``p *= 1 - lr * weight_decay``; the gradient
    itself is not modified.  Same parameters as :class:`Adam`; ``weight_decay`` defaults to 0.01.
    """

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)


def make_optimizer(name, params, *, lr: float, momentum: float = 0.0, weight_decay: float = 0.0,
                   betas=(0.9, 0.999), eps: float = 1e-8, nesterov: bool = False) -> Optimizer:
    """Build :class:`SGD`, :class:`Adam` or :class:`AdamW` by name (an optimizer object passes through).

    The estimators' ``optimizer="adam"`` hyperparameter goes through here.  ``weight_decay=None``
    gives AdamW's default of 0.01.

    Raises
    ------
    InputError
        For an unknown name, or an out-of-range setting (the message names it).
    """
    if not isinstance(name, str):
        return name
    key = name.lower()
    if key == "sgd":
        return SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay, nesterov=nesterov)
    if key == "adam":
        return Adam(params, lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)
    if key == "adamw":
        return AdamW(params, lr=lr, betas=tuple(betas), eps=eps,
                     weight_decay=0.01 if weight_decay is None else weight_decay)
    raise InputError(f"optimizer must be 'sgd', 'adam' or 'adamw', got {name!r}")
