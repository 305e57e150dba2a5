"""Carry a window regressor to PyTorch and back.

Train or inspect in glassformer, fine-tune in PyTorch (GPUs, ``DistributedDataParallel``), and come
back to inspect the result with ``trace``, the figures and the reports::

    from glassformer.interop import from_torch, to_torch

    module = to_torch(model)                   # a torch.nn.Module, same weights and outputs
    ...                                        # any PyTorch training loop
    model2 = from_torch(module)                # a fitted SequenceRegressor again
    model2.trace(X)["layers.0.A"]

=============================  ===============================================================
glassformer part               PyTorch counterpart
=============================  ===============================================================
encoder layers                 ``torch.nn.TransformerEncoderLayer`` / ``TransformerEncoder``
                               (batch first; post- or pre-norm; relu, gelu, gelu_tanh)
attention without output       :class:`~glassformer.interop.torch_encoder.EncoderLayer` (same
projection, RoPE, FNet mixing  parameter names; the chapter's block, Su et al. 2021, Lee-Thorp
                               et al. 2021)
input embeddings               :mod:`~glassformer.interop.torch_layers` (linear, MLP, Fourier)
positional encodings           :mod:`~glassformer.interop.torch_layers` (sinusoidal, wavelengths,
                               chapter, learned, continuous, fourier, none; rotary in attention)
head                           ``torch.nn.Linear``
LSTM regressor                 ``torch.nn.LSTM(batch_first=True)`` and ``torch.nn.Linear``
=============================  ===============================================================

The torch modules' ``state_dict`` keys are those of glassformer's ``network_.state_dict()`` (fixed
Fourier frequencies travel as buffers), and their outputs equal glassformer's to 1e-10 in float64.

torch is optional: importing glassformer or this module never imports it; the two functions do,
and raise :class:`~glassformer.errors.MissingDependencyError` naming ``pip install torch`` without it.
"""

from __future__ import annotations

import importlib

from ..errors import MissingDependencyError

__all__ = ["from_torch", "to_torch"]


def _require_torch(where: str):
    try:
        return importlib.import_module("torch")
    except ImportError:
        raise MissingDependencyError(f"{where} needs PyTorch, which is not installed: pip install torch "
                                     "(or pip install -e \".[torch]\")") from None


def to_torch(model):
    """A ``torch.nn.Module`` with the architecture, weights and outputs of a glassformer window regressor.

    Parameters
    ----------
    model : SequenceRegressor or LSTMRegressor
        Fitted, or built with ``build_network``.  For a :class:`~glassformer.wells.WellModel` pass
        ``well_model.model_`` (the torch module works on scaled windows).

    Returns
    -------
    TorchSequenceRegressor or TorchLSTMRegressor
        ``forward(X (batch, seq, n_features), positions=None)`` -> ``(batch, seq, n_targets)``, in
        the model's dtype (float64 by default) and training mode (call ``.eval()`` to predict, as with
        any PyTorch module).  ``positions``: ``(seq,)`` or ``(batch, seq)``; None gives 1..seq, as
        glassformer.  Its ``state_dict`` keys are those of ``model.network_.state_dict()``.
        The transformer also takes ``src_key_padding_mask (batch, seq)`` (True = padding); a window
        that is padding throughout gives NaN in PyTorch's own encoder layers in evaluation mode
        (their fused path), where glassformer gives zero attention.

    Raises
    ------
    MissingDependencyError
        torch is not installed.
    NotReadyError
        The model has no network yet.
    InputError
        Not a window regressor, or a part with no PyTorch counterpart here (the message names the
        option and lists the supported values).
    """
    _require_torch("to_torch")
    from .export import export   # imports torch, an optional dependency: only when a conversion runs

    return export(model)


def from_torch(module, model=None):
    """The fitted glassformer window regressor holding the weights of a torch module.

    Parameters
    ----------
    module : torch.nn.Module or dict
        A module made by :func:`to_torch` (possibly trained since, wrapped in
        ``DistributedDataParallel``/``DataParallel`` or compiled), or its ``state_dict``.
    model : SequenceRegressor or LSTMRegressor, optional
        The architecture (hyperparameters) to rebuild; it is cloned, never changed.  Default: the
        parameters ``to_torch`` recorded on the module (needed for a bare ``state_dict``).

    Returns
    -------
    SequenceRegressor or LSTMRegressor
        Fitted (``is_fitted_``; ``history_`` is None: the training happened in PyTorch), whose
        ``predict`` and ``trace`` give the module's outputs (to 1e-10 in float64).

    Raises
    ------
    MissingDependencyError
        torch is not installed.
    InputError
        Neither a module nor a state_dict, or nothing says which architecture to rebuild.
    StateDictError
        The weights do not fit the architecture (missing, extra or wrongly shaped entries).
    """
    _require_torch("from_torch")
    from .restore import restore   # imports torch, an optional dependency: only when a conversion runs

    return restore(module, model)
