"""The module contract every glassformer layer follows.

A :class:`Module` is a PyTorch-shaped object with its calculus written out:

* ``forward(*inputs)`` computes the output and, unless caching is switched off
  (:meth:`Module.no_cache`), keeps in ``self._cache`` exactly what ``backward`` needs.
* ``backward(grad_output)`` takes dL/d(output) with the output's shape, **adds**
  dL/d(parameter) into each parameter's ``.grad`` and returns dL/d(input): an
  ndarray for a single-input module, a tuple with one entry per array input
  (``None`` for inputs that were ``None``) otherwise.  Calling it before
  ``forward`` raises :class:`~glassformer.errors.NotReadyError`.
* Input checks cost nothing inside a model: a module used on its own validates its arguments
  (``check_inputs`` is True: dtype, shape and a finiteness scan), and a module registered as a
  child of another sets ``check_inputs = False`` -- its parent checked the data at the model's
  entry point, and scanning every intermediate on every call would cost more than the arithmetic
  of a small model.  Set it back to True on a child to debug.
* Parameters and child modules are discovered from attribute assignment, in
  assignment order, so ``named_parameters()`` and ``state_dict()`` give
  PyTorch's qualified names (``self_attn.in_proj_weight``, ``linear1.weight``)
  and ``load_state_dict({k: v.numpy() for k, v in torch_module.state_dict().items()})``
  works unchanged.
* An *inline* child (:meth:`Module.inline`) is a module whose parameters and children are named as
  the parent's own: a transformer layer reuses a :class:`~glassformer.nn.FeedForward` while its
  ``state_dict`` keeps PyTorch's flat names (``linear1.weight``, not ``ffn.linear1.weight``).
* ``tracing()`` asks for what only inspection needs (attention keeps a copy of its scores S);
  ``intermediates()`` then returns exactly what the forward pass computed.
* ``probing(probe)`` shows a probe every named intermediate (``_tap``, forward) and its gradient
  (``_tap_grad``, backward) at the line that computes it: the backward trace records the
  gradients this way, and the tests inject finite-difference perturbations through the same hook.

Randomness is explicit: constructors that draw numbers take ``rng`` (an int
seed or a ``numpy.random.Generator``), see :func:`make_rng`.  There is no
global state: ``train()``/``eval()`` and the caching switch are per instance.
"""

from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager
from typing import Iterator

import numpy as np

from .._validation import check_dtype
from ..errors import NotReadyError, StateDictError
from .flat import flatten_parameters


def make_rng(rng=None) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from an int seed, a Generator, or None (fresh entropy).

    The same int always gives the same numbers.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be an int seed, a numpy.random.Generator or None, got {type(rng).__name__}")


class Parameter:
    """A trainable array and its accumulated gradient.

    Attributes
    ----------
    data : ndarray
        The value; optimizers update it **in place**.
    grad : ndarray
        dL/d(data), same shape and dtype; ``backward`` adds into it, ``zero_grad`` clears it.
    """

    __slots__ = ("data", "grad")

    def __init__(self, data):
        self.data = np.array(data, copy=True)
        if self.data.dtype.kind != "f":
            self.data = self.data.astype(np.float64)
        self.grad = np.zeros_like(self.data)

    @property
    def shape(self) -> tuple:
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def size(self) -> int:
        return self.data.size

    def __repr__(self) -> str:
        return f"Parameter(shape={self.data.shape}, dtype={self.data.dtype})"


class Module:
    """Base class of all layers and models (see the module docstring for the contract)."""

    _tracing = False          # set per instance by ``tracing()``
    _probe = None             # set per instance by ``probing()``

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_inline", ())
        object.__setattr__(self, "_dtype_cache", None)
        self.training = True
        self.check_inputs = True          # False once registered as a child (see the module docstring)
        self._keep_cache = True
        self._cache = None

    # --- registration -------------------------------------------------
    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if params is None:
            raise AttributeError("call Module.__init__() before assigning attributes")
        mods = self.__dict__["_modules"]
        owner = self._inline_owner(name)
        if owner is not None:                  # a name of an inline child's: assign it there, keep the alias
            setattr(owner, name, value)
            object.__setattr__(self, name, value)
            return
        params.pop(name, None)
        mods.pop(name, None)
        if isinstance(value, Parameter):
            params[name] = value
            object.__setattr__(self, "_dtype_cache", None)   # the cached dtype may change
        elif isinstance(value, Module):
            mods[name] = value
            object.__setattr__(self, "_dtype_cache", None)
            object.__setattr__(value, "check_inputs", False)   # the parent validates at the entry point
        object.__setattr__(self, name, value)

    def _inline_owner(self, name: str):
        """The inline child that holds ``name`` as a parameter or child, or None."""
        d = self.__dict__
        for child in d.get("_inline", ()):
            inner = d["_modules"][child]
            if name in inner._parameters or name in inner._modules:
                return inner
        return None

    def inline(self, name: str) -> None:
        """Name the parameters and children of child ``name`` as this module's own.

        ``state_dict`` and ``named_modules`` then skip the ``name.`` prefix, and ``self.<inner name>``
        is the same object as ``self.<name>.<inner name>`` (an alias, not a registration); the child
        itself still takes part in ``train()``, ``no_cache()`` and friends.
        """
        if name not in self._modules:
            raise AttributeError(f"{type(self).__name__}.inline: no child module named {name!r}")
        object.__setattr__(self, "_inline", self._inline + (name,))
        child = self._modules[name]
        for inner in (*child._parameters, *child._modules):
            object.__setattr__(self, inner, getattr(child, inner))

    def __delattr__(self, name):
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        object.__delattr__(self, name)

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} does not implement forward")

    def backward(self, grad_output):  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} does not implement backward")

    # --- caching for backward -----------------------------------------
    def _save(self, **tensors) -> None:
        """Keep what ``backward`` needs (nothing when caching is off, e.g. in ``predict``)."""
        # object.__setattr__: this runs on every forward, so skip the registration logic
        object.__setattr__(self, "_cache", tensors if self._keep_cache else None)

    def _saved(self) -> dict:
        """Return the forward cache, or raise :class:`NotReadyError` if there is none."""
        if self._cache is None:
            why = "" if self._keep_cache else " (caching is off: forward ran inside no_cache())"
            raise NotReadyError(f"{type(self).__name__}.backward() called before forward(){why}")
        return self._cache

    def clear_cache(self) -> None:
        """Drop the forward caches of this module and all its children."""
        for m in self.modules():
            m._cache = None

    @contextmanager
    def no_cache(self):
        """Context manager: forward passes inside keep no caches (inference); restores afterwards."""
        mods = list(self.modules())
        before = [m._keep_cache for m in mods]
        for m in mods:
            m._keep_cache = False
            m._cache = None
        try:
            yield self
        finally:
            for m, keep in zip(mods, before):
                m._keep_cache = keep

    @contextmanager
    def tracing(self):
        """Context manager: forward passes inside also record what only inspection needs
        (the attention scores S), so that ``intermediates()`` returns them; restores afterwards."""
        with self._set_on_every_module("_tracing", True):
            yield self

    @contextmanager
    def probing(self, probe):
        """Context manager: every module of the tree shows ``probe`` its named intermediates.

        ``probe.forward(module, symbol, value)`` is called where a forward pass computes the
        intermediate ``symbol`` (the chapter's names: ``"E"``, ``"T1"``, ``"Q"`` ...) and returns the
        value to carry on with (the same array, or a perturbed one); ``probe.backward(module, symbol,
        grad)`` is called where backward computes ``grad = dL/d(symbol)`` and only looks at it (it must
        not change it in place).  Which symbols a module shows is listed in its ``backward``
        docstring.  Restores the previous probes afterwards.
        """
        with self._set_on_every_module("_probe", probe):
            yield self

    @contextmanager
    def _set_on_every_module(self, attribute: str, value):
        """Set ``attribute`` on every module of the tree for the block; restore each one's own after."""
        mods = list(self.modules())
        before = [getattr(m, attribute) for m in mods]
        for m in mods:
            object.__setattr__(m, attribute, value)
        try:
            yield
        finally:
            for m, old in zip(mods, before):
                object.__setattr__(m, attribute, old)

    def _tap(self, symbol: str, value):
        """Forward: the intermediate ``symbol`` as the probe leaves it (unchanged without a probe)."""
        probe = self._probe
        return value if probe is None else probe.forward(self, symbol, value)

    def _tap_grad(self, symbol: str, grad):
        """Backward: show the probe ``grad = dL/d(symbol)``; returns ``grad``."""
        probe = self._probe
        if probe is not None:
            probe.backward(self, symbol, grad)
        return grad

    # --- traversal ----------------------------------------------------
    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, "Module"]]:
        """Yield ``(qualified_name, module)`` for this module (name ``""``) and every descendant."""
        yield prefix, self
        for name, child in self._modules.items():
            path = f"{prefix}.{name}" if prefix else name
            if name in self._inline:          # the child under its name, its own children without it
                yield path, child
                for inner, grandchild in child._modules.items():
                    yield from grandchild.named_modules(f"{prefix}.{inner}" if prefix else inner)
            else:
                yield from child.named_modules(path)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def children(self) -> Iterator["Module"]:
        yield from self._modules.values()

    def named_parameters(self, prefix: str = "", remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Yield ``(qualified_name, Parameter)`` in PyTorch's order (own first, then children).

        As in PyTorch, a parameter shared by two modules (tied weights) is yielded once, under its
        first name, unless ``remove_duplicate=False``; ``state_dict`` lists every name.
        """
        seen = set()
        for name, p in self._all_named_parameters(prefix):
            if remove_duplicate:
                if id(p) in seen:
                    continue
                seen.add(id(p))
            yield name, p

    def _all_named_parameters(self, prefix: str) -> Iterator[tuple[str, Parameter]]:
        for name, p in self._parameters.items():
            yield (f"{prefix}.{name}" if prefix else name), p
        for name, child in self._modules.items():
            inner = prefix if name in self._inline else (f"{prefix}.{name}" if prefix else name)
            yield from child._all_named_parameters(inner)

    def parameters(self) -> list[Parameter]:
        return [p for _, p in self.named_parameters()]

    def flatten_parameters(self) -> "Module":
        """Lay every parameter out in one value array and one gradient array (views; see
        :mod:`glassformer.nn.flat`), so that an optimizer updates the model with a few calls; returns self."""
        flatten_parameters(self.parameters())
        return self

    def num_parameters(self) -> int:
        """Total number of trainable scalars."""
        return int(sum(p.size for p in self.parameters()))

    # --- state ----------------------------------------------------------
    def zero_grad(self) -> None:
        """Set every parameter gradient in the subtree to zero, in place."""
        for p in self.parameters():
            p.grad.fill(0.0)

    def train(self, mode: bool = True) -> "Module":
        """Set training mode (dropout active) on this module and its children; returns self."""
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self) -> "Module":
        """Set evaluation mode (dropout off); returns self."""
        return self.train(False)

    @property
    def dtype(self) -> np.dtype:
        """The floating dtype of the parameters (float64 when the module has none).

        Cached, because layers read it on every forward; ``to()`` and assigning a
        parameter or child reset the cache.
        """
        if self._dtype_cache is None:
            first = next(iter(self.named_parameters()), None)
            object.__setattr__(self, "_dtype_cache", first[1].dtype if first else np.dtype(np.float64))
        return self._dtype_cache

    def to(self, dtype) -> "Module":
        """Cast every parameter (and its gradient) to ``dtype`` (float64 or float32), in place; returns self."""
        dt = check_dtype(dtype)
        for p in self.parameters():
            if p.data.dtype != dt:
                p.data = p.data.astype(dt)
                p.grad = p.grad.astype(dt)
        for m in self.modules():
            object.__setattr__(m, "_dtype_cache", None)
            m._on_dtype_change(dt)
        return self

    def _on_dtype_change(self, dtype: np.dtype) -> None:
        """Hook for modules holding fixed (non-parameter) arrays that must follow the dtype."""

    def state_dict(self) -> "OrderedDict[str, np.ndarray]":
        """Return ``{qualified_name: copy of array}`` with PyTorch's names and layouts."""
        return OrderedDict((name, p.data.copy()) for name, p in self.named_parameters(remove_duplicate=False))

    def load_state_dict(self, state_dict, strict: bool = True) -> None:
        """Copy arrays into the parameters, converting to each parameter's dtype.

        Accepts exactly ``{k: v.numpy() for k, v in torch_module.state_dict().items()}``.

        Raises
        ------
        StateDictError
            On missing or unexpected keys (when ``strict``) or any shape mismatch; nothing is
            changed in that case.
        """
        own = OrderedDict(self.named_parameters(remove_duplicate=False))
        given = {k: np.asarray(v) for k, v in dict(state_dict).items()}
        missing = [k for k in own if k not in given]
        unexpected = [k for k in given if k not in own]
        if strict and (missing or unexpected):
            raise StateDictError(
                f"{type(self).__name__}.load_state_dict: missing keys {missing}, unexpected keys {unexpected}"
            )
        for k, p in own.items():
            if k in given and given[k].shape != p.shape:
                raise StateDictError(
                    f"{type(self).__name__}.load_state_dict: '{k}' has shape {given[k].shape}, "
                    f"expected {p.shape}"
                )
        for k, p in own.items():
            if k in given:
                p.data[...] = given[k].astype(p.dtype, copy=False)

    # --- display --------------------------------------------------------
    def extra_repr(self) -> str:
        """Hyperparameters shown by ``repr``; subclasses override."""
        return ""

    def __repr__(self) -> str:
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not self._modules:
            return head + ")"
        lines = [head]
        for name, child in self._modules.items():
            child_repr = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {child_repr}")
        return "\n".join(lines) + "\n)"


class ModuleList(Module):
    """An indexable list of modules, named ``0``, ``1``, ... like ``torch.nn.ModuleList``."""

    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, module: Module) -> "ModuleList":
        setattr(self, str(len(self._modules)), module)
        return self

    def __getitem__(self, i: int) -> Module:
        return list(self._modules.values())[i]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(list(self._modules.values()))
