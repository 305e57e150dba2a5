"""Token embedding table, PyTorch's ``nn.Embedding`` layout."""

from __future__ import annotations

import numpy as np

from .._validation import check_positive_int
from ..errors import InputError
from .module import Module, Parameter, make_rng


class Embedding(Module):
    """Look-up table mapping integer ids to vectors.

    Parameters
    ----------
    num_embeddings : int
        Vocabulary size V.
    embedding_dim : int
        Vector size (``d_model``).
    padding_idx : int, optional
        As PyTorch: that row is initialised to zero and receives no gradient.
    rng : int or numpy.random.Generator, optional
        Initial weights are N(0, 1), PyTorch's default.
    dtype : float64 (default) or float32

    Attributes
    ----------
    weight : Parameter of shape (num_embeddings, embedding_dim)

    Shapes
    ------
    forward: integer ids of any shape ``(...)`` -> ``(..., embedding_dim)``.
    backward returns None (ids have no gradient); the table's gradient is accumulated
    with ``np.add.at`` so repeated ids add up.

    Raises
    ------
    InputError if ids are not integers or fall outside ``[0, num_embeddings)``.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 *, rng=None, dtype=np.float64):
        super().__init__()
        self.num_embeddings = check_positive_int(num_embeddings, "num_embeddings", "Embedding")
        self.embedding_dim = check_positive_int(embedding_dim, "embedding_dim", "Embedding")
        if padding_idx is not None and not 0 <= padding_idx < num_embeddings:
            raise InputError(f"Embedding: padding_idx must be in [0, {num_embeddings}), got {padding_idx}")
        self.padding_idx = padding_idx
        table = make_rng(rng).standard_normal((num_embeddings, embedding_dim)).astype(dtype)
        if padding_idx is not None:
            table[padding_idx] = 0.0
        self.weight = Parameter(table)

    def forward(self, ids) -> np.ndarray:
        ids = np.asarray(ids)
        if ids.dtype.kind not in "iu":
            raise InputError(f"Embedding.forward: ids must be integers, got dtype {ids.dtype}")
        if ids.size and (ids.min() < 0 or ids.max() >= self.num_embeddings):
            raise InputError(
                f"Embedding.forward: ids must be in [0, {self.num_embeddings}), "
                f"got min {ids.min()} and max {ids.max()}"
            )
        self._save(ids=ids)
        return self.weight.data[ids]

    def backward(self, grad_output: np.ndarray) -> None:
        ids = self._saved()["ids"]
        g = grad_output.reshape(-1, self.embedding_dim)
        flat = ids.reshape(-1)
        if self.padding_idx is not None:
            keep = flat != self.padding_idx
            g, flat = g[keep], flat[keep]
        np.add.at(self.weight.grad, flat, g)
        return None

    def extra_repr(self) -> str:
        pad = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"
