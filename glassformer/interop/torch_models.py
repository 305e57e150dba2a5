"""The window regressors as ``torch.nn.Module`` s: what :func:`glassformer.interop.to_torch` returns.

:class:`TorchSequenceRegressor` is glassformer's
:class:`~glassformer.models.networks.TransformerRegressorNet` written with PyTorch modules::

    E = embedding(X)                    (batch, seq, d_model)
    P = positional(positions)           (seq, d_model) or (batch, seq, d_model)
    Z = E + P
    H = encoder(Z)                      torch.nn.TransformerEncoder, or the block of .torch_encoder
    y_hat = head(H)                     torch.nn.Linear, (batch, seq, n_targets)

:class:`TorchLSTMRegressor` is ``torch.nn.LSTM`` (batch first) and a linear head.  Both carry
``glassformer_kind``, ``glassformer_params`` (the estimator's ``get_params()``), ``n_features`` and
``n_targets``, which is what :func:`glassformer.interop.from_torch` needs to rebuild the estimator.

This module imports torch: :mod:`glassformer.interop` imports it only when a conversion runs.
"""

from __future__ import annotations

import copy

import torch
from torch import nn


class _Carried(nn.Module):
    """What every exported model carries back to glassformer: the estimator's kind, parameters and widths."""

    def __init__(self, kind: str, params: dict, n_features: int, n_targets: int):
        super().__init__()
        self.glassformer_kind = kind
        self.glassformer_params = copy.deepcopy(dict(params))
        self.n_features, self.n_targets = int(n_features), int(n_targets)


class TorchSequenceRegressor(_Carried):
    """Encoder-only transformer regressing target logs at every position of a window.

    ``forward(X (batch, seq, n_features), positions=None, src_key_padding_mask=None)``
    -> ``(batch, seq, n_targets)``.  ``positions``: ``(seq,)`` or ``(batch, seq)``, sample index or
    depth (m); None gives 1..seq, glassformer's default.  ``src_key_padding_mask (batch, seq)``:
    True = padding (a window that is all padding: NaN from ``torch.nn.TransformerEncoder`` in eval
    mode, zeros from glassformer).  Parameter names are those of the glassformer network's ``state_dict``.
    """

    def __init__(self, embedding: nn.Module, positional: nn.Module, encoder: nn.Module, head: nn.Linear, *,
                 rotary: bool, kind: str, params: dict, n_features: int, n_targets: int):
        super().__init__(kind, params, n_features, n_targets)
        self.embedding, self.positional, self.encoder, self.head = embedding, positional, encoder, head
        self.rotary = bool(rotary)

    def forward(self, X: torch.Tensor, positions=None, src_key_padding_mask=None) -> torch.Tensor:
        if positions is None:
            positions = torch.arange(1, X.shape[1] + 1, dtype=torch.float64, device=X.device)
        positions = torch.as_tensor(positions, device=X.device)
        E = self.embedding(X)                                               # (batch, seq, d_model)
        Z = E + self.positional(positions).to(E.dtype)                      # (batch, seq, d_model)
        if self.rotary:
            H = self.encoder(Z, src_key_padding_mask=src_key_padding_mask, positions=positions)
        else:
            H = self.encoder(Z, src_key_padding_mask=src_key_padding_mask)  # (batch, seq, d_model)
        return self.head(H)                                                 # (batch, seq, n_targets)


class TorchLSTMRegressor(_Carried):
    """``y_hat = W_y LSTM(X) + b_y`` with ``torch.nn.LSTM(batch_first=True)``; keys ``lstm.*``, ``head.*``.

    ``forward(X (batch, seq, n_features), positions=None)`` -> ``(batch, seq, n_targets)``;
    positions are accepted and ignored, as glassformer's LSTM regressor does.
    """

    def __init__(self, hidden_size: int, num_layers: int, bidirectional: bool, dropout: float, *, kind: str,
                 params: dict, n_features: int, n_targets: int):
        super().__init__(kind, params, n_features, n_targets)
        self.lstm = nn.LSTM(n_features, hidden_size, num_layers, batch_first=True, dropout=dropout,
                            bidirectional=bidirectional)
        self.head = nn.Linear(hidden_size * (2 if bidirectional else 1), n_targets)

    def forward(self, X: torch.Tensor, positions=None) -> torch.Tensor:
        H, _ = self.lstm(X)                                                 # (batch, seq, D * hidden_size)
        return self.head(H)                                                 # (batch, seq, n_targets)
