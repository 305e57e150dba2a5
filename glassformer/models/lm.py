"""Decoder-only (GPT-style) causal language model with a key/value cache for generation.

::

    X = E[ids] (+ P_learned[0..T-1])                    (batch, T, d_model)
    H = Block_N(... Block_1(dropout(X)))               pre-norm blocks, causal self-attention
        Block: T1 = X + SA(LN1(X)),  H = T1 + FFN(LN2(T1))      (Radford et al., 2019, sec. 2.3)
    logits = LN_f(H) W_head^T                           (batch, T, vocab)

Positions are a learned table (GPT-2) or rotary embeddings applied to queries and keys inside
attention (RoPE, Su et al., 2021).  The blocks are :class:`~glassformer.nn.TransformerEncoderLayer`
with ``norm_first=True`` used with ``is_causal=True`` -- the same arithmetic as
``torch.nn.TransformerEncoderLayer(norm_first=True)`` with a causal mask -- stacked in a
:class:`~glassformer.nn.TransformerEncoder` whose final norm is GPT-2's ``ln_f``.  The head has no
bias; with ``tie_weights=True`` it shares the token embedding table (its gradient is the sum of
both uses).

State-dict names: ``tok_emb.weight``, ``pos_emb.weight`` (learned only), ``blocks.layers.<i>.*``
(PyTorch encoder-layer names), ``blocks.norm.weight/bias``, ``lm_head.weight``.

Generation (:meth:`DecoderOnlyLM.generate`) feeds the prompt once, then one token per step
through the same blocks with a key/value cache (:mod:`glassformer.nn.kv_cache`); the per-step
logits equal a full re-run of the prefix.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._validation import check_dtype, check_positive_int, check_probability
from ..errors import InputError, ShapeError
from ..train import Trainer, standard_callbacks
from ..train.losses import CrossEntropyLoss, softmax
from ..nn.dropout import Dropout
from ..nn.embedding import Embedding
from ..nn.kv_cache import AttentionCache
from ..nn.linear import Linear
from ..nn.module import Module, make_rng
from ..nn.normalization import LayerNorm
from ..nn.positional import build_positional
from ..nn.transformer import TransformerEncoder, TransformerEncoderLayer
from ..train.optim import AdamW
from .persistence import load_configured, save_configured

__all__ = ["DecoderOnlyLM", "LMCache", "fit_lm", "evaluate_lm"]

MODEL_KIND = "glassformer.DecoderOnlyLM"


class LMCache:
    """Per-layer key/value caches of the positions fed so far (see :meth:`DecoderOnlyLM.start_cache`)."""

    def __init__(self, num_layers: int):
        self.layers = [AttentionCache() for _ in range(num_layers)]
        self.length = 0


class DecoderOnlyLM(Module):
    """GPT-style language model: token (+ learned position) embedding, pre-norm causal blocks, head.

    Parameters
    ----------
    vocab_size : int
    d_model : int, default 128
    nhead : int, default 4
    num_layers : int, default 4
    dim_feedforward : int, default 512
    dropout : float, default 0.1
        On the embeddings and inside every block (training mode only).
    max_len : int, default 256
        Context length: the longest sequence ``forward`` and ``generate`` accept.
    positional : {"learned", "rotary"}, default "learned"
    tie_weights : bool, default True
        Head weight = token embedding table.
    activation : {"gelu", "relu", "gelu_tanh"}, default "gelu"
    rng : int or numpy.random.Generator, optional
        Embedding tables N(0, 0.02^2) (GPT-2); blocks use PyTorch's initialisation.
    dtype : float64 (default) or float32

    Shapes
    ------
    ``forward(ids (batch, T)) -> logits (batch, T, vocab_size)``, T <= max_len;
    ``backward(dlogits)`` adds every parameter gradient and returns None.
    """

    def __init__(self, vocab_size: int, d_model: int = 128, nhead: int = 4, num_layers: int = 4,
                 dim_feedforward: int = 512, dropout: float = 0.1, *, max_len: int = 256,
                 positional: str = "learned", tie_weights: bool = True, activation: str = "gelu",
                 rng=None, dtype=np.float64):
        super().__init__()
        where = "DecoderOnlyLM"
        self.vocab_size = check_positive_int(vocab_size, "vocab_size", where)
        self.d_model = check_positive_int(d_model, "d_model", where)
        self.max_len = check_positive_int(max_len, "max_len", where)
        if positional not in ("learned", "rotary"):
            raise InputError(f"{where}: positional must be 'learned' or 'rotary', got {positional!r}")
        p = check_probability(dropout, "dropout", where)
        dt = check_dtype(dtype)
        gen = make_rng(rng)
        self.config = dict(vocab_size=int(vocab_size), d_model=int(d_model), nhead=int(nhead),
                           num_layers=int(num_layers), dim_feedforward=int(dim_feedforward), dropout=p,
                           max_len=int(max_len), positional=positional, tie_weights=bool(tie_weights),
                           activation=activation, dtype=dt.name)
        self.positional = positional
        self.tok_emb = Embedding(vocab_size, d_model, rng=gen, dtype=dt)
        self.tok_emb.weight.data *= np.asarray(0.02, dtype=dt)
        if d_model % nhead:
            raise InputError(f"{where}: d_model ({d_model}) must be divisible by nhead ({nhead})")
        # rotary: pos_emb is the zero encoding (no parameters) and the blocks get the RoPE head hook
        self.pos_emb, head_hook = build_positional(positional, d_model, nhead, rng=gen, dtype=dt, max_len=max_len)
        self.drop = Dropout(p, rng=gen)
        block = TransformerEncoderLayer(d_model, nhead, dim_feedforward, p, activation, norm_first=True,
                                        head_hook=head_hook, rng=gen, dtype=dt)
        self.blocks = TransformerEncoder(block, num_layers, LayerNorm(d_model, dtype=dt))
        self.lm_head = Linear(d_model, vocab_size, bias=False, rng=gen, dtype=dt)
        self.tie_weights = bool(tie_weights)
        if self.tie_weights:
            self.lm_head.weight = self.tok_emb.weight

    # ------------------------------------------------------------------ training pass
    def _check(self, ids, where: str, limit: int | None = None) -> np.ndarray:
        ids = np.asarray(ids)
        if ids.ndim != 2 or ids.shape[1] == 0:
            raise ShapeError(f"{where}: ids must have shape (batch, seq) with seq >= 1, got {ids.shape}")
        if ids.dtype.kind not in "iu":
            raise InputError(f"{where}: ids must be integers, got dtype {ids.dtype}")
        limit = self.max_len if limit is None else limit
        if self.positional == "learned" and ids.shape[1] > limit:
            raise InputError(f"{where}: sequence length {ids.shape[1]} exceeds the context max_len={limit}")
        return ids

    def forward(self, ids) -> np.ndarray:
        """Next-token logits ``(batch, T, vocab_size)``: row t scores token t+1 given tokens 0..t."""
        ids = self._check(ids, "DecoderOnlyLM.forward")
        x = self.tok_emb(ids) + self.pos_emb(np.arange(ids.shape[1]))
        h = self.blocks(self.drop(x), is_causal=True)
        logits = self.lm_head(h)
        self._save(done=True)
        return logits

    def backward(self, dlogits) -> None:
        """Back-propagate ``dL/dlogits``; adds into every ``.grad`` (tied weight: both uses); returns None."""
        self._saved()
        dx = self.drop.backward(self.blocks.backward(self.lm_head.backward(np.asarray(dlogits))))
        self.pos_emb.backward(dx.sum(axis=0))
        self.tok_emb.backward(dx)
        return None

    # ------------------------------------------------------------------ cached inference
    def start_cache(self) -> LMCache:
        """An empty key/value cache for :meth:`step`."""
        return LMCache(len(self.blocks.layers))

    def step(self, cache: LMCache, ids) -> np.ndarray:
        """Feed new tokens ``ids (batch, n_new)`` after those in ``cache``; return their logits ``(batch, n_new, V)``.

        Inference only (eval mode, inside ``no_cache()``).  ``step(cache, prompt)`` followed by one
        token at a time gives the logits of ``forward`` on the whole sequence, row by row.

        Raises
        ------
        InputError if the total length exceeds ``max_len`` with learned positions.
        """
        ids = self._check(ids, "DecoderOnlyLM.step", limit=10**18)
        n = ids.shape[1]
        if self.positional == "learned" and cache.length + n > self.max_len:
            raise InputError(f"DecoderOnlyLM.step: {cache.length} cached + {n} new positions exceed the context "
                             f"max_len={self.max_len} of the learned position table")
        x = self.tok_emb(ids) + self.pos_emb(np.arange(cache.length, cache.length + n))
        h = self.blocks(x, is_causal=True, cache=cache.layers)
        cache.length += n
        return self.lm_head(h)

    def generate(self, prompt_ids, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None,
                 rng=None) -> np.ndarray:
        """Sample a continuation of every prompt, with a key/value cache.

        Parameters
        ----------
        prompt_ids : int array (batch, T0) or (T0,)
            Prompts of equal length (no padding), T0 >= 1.
        max_new_tokens : int
        temperature : float >= 0, default 1.0
            Logits are divided by it; 0 means greedy (argmax).
        top_k : int, optional
            Sample only among the ``top_k`` most probable tokens (ties at the k-th value kept).
        rng : int or numpy.random.Generator, optional
            The same seed gives the same text.

        Returns
        -------
        int64 array (batch, T0 + max_new_tokens) (or 1-D for a 1-D prompt): prompt then new tokens.

        Raises
        ------
        InputError for a bad argument or when T0 + max_new_tokens exceeds ``max_len`` (learned positions).
        """
        where = "DecoderOnlyLM.generate"
        prompt = np.asarray(prompt_ids)
        one = prompt.ndim == 1
        prompt = self._check(prompt[None] if one else prompt, where)
        n_new = check_positive_int(max_new_tokens, "max_new_tokens", where, minimum=0)
        if self.positional == "learned" and prompt.shape[1] + n_new > self.max_len:
            raise InputError(f"{where}: prompt length {prompt.shape[1]} + max_new_tokens {n_new} exceeds "
                             f"max_len={self.max_len}")
        temperature = float(temperature)
        if not np.isfinite(temperature) or temperature < 0:
            raise InputError(f"{where}: temperature must be a finite number >= 0, got {temperature!r}")
        if top_k is not None:
            top_k = check_positive_int(top_k, "top_k", where)
        gen = make_rng(rng)
        out = [prompt.astype(np.int64)]
        was = self.training
        self.eval()
        try:
            with self.no_cache():
                cache = self.start_cache()
                logits = self.step(cache, prompt)[:, -1]
                for i in range(n_new):
                    nxt = sample_next(logits, temperature, top_k, gen)
                    out.append(nxt[:, None])
                    if i + 1 < n_new:
                        logits = self.step(cache, nxt[:, None])[:, -1]
        finally:
            self.train(was)
        ids = np.concatenate(out, axis=1)
        return ids[0] if one else ids

    # ------------------------------------------------------------------ files
    def save(self, directory, *, tokenizer=None, overwrite: bool = False, extra: dict | None = None) -> Path:
        """Write ``model.npz`` + ``model.json`` (and ``tokenizer.json`` if given) atomically."""
        directory = Path(directory)
        path = save_configured(self, directory, MODEL_KIND, overwrite=overwrite, extra=extra)
        if tokenizer is not None:
            tokenizer.save(directory / "tokenizer.json")
        return path

    @classmethod
    def load(cls, directory) -> "DecoderOnlyLM":
        """Rebuild a model saved by :meth:`save`.  Raises ModelFileError for bad or foreign files."""
        return load_configured(cls, directory, MODEL_KIND)

    def extra_repr(self) -> str:
        c = self.config
        return (f"vocab_size={c['vocab_size']}, d_model={c['d_model']}, nhead={c['nhead']}, "
                f"num_layers={c['num_layers']}, positional={c['positional']!r}, tie_weights={c['tie_weights']}")


def sample_next(logits: np.ndarray, temperature: float, top_k: int | None, rng: np.random.Generator) -> np.ndarray:
    """One token id per row of ``logits (batch, V)``: argmax for temperature 0, else a seeded draw.

    Vectorised inverse-CDF sampling: one uniform number per row, compared with the cumulative
    probabilities (after temperature scaling and top-k filtering).
    """
    logits = np.asarray(logits, dtype=np.float64)
    if temperature == 0:
        return np.argmax(logits, axis=-1).astype(np.int64)
    z = logits / temperature
    if top_k is not None and top_k < z.shape[-1]:
        kth = np.partition(z, -top_k, axis=-1)[:, -top_k][:, None]
        z = np.where(z < kth, -np.inf, z)
    p = softmax(z)
    cdf = np.cumsum(p, axis=-1)
    u = rng.random((z.shape[0], 1)) * cdf[:, -1:]
    idx = (cdf <= u).sum(axis=-1)
    return np.minimum(idx, z.shape[-1] - 1).astype(np.int64)


__all__.append("sample_next")


# ====================================================================== training
def _windows(data: np.ndarray, starts: np.ndarray, block: int):
    idx = starts[:, None] + np.arange(block + 1)
    w = data[idx]
    return w[:, :-1], w[:, 1:]


def evaluate_lm(model: DecoderOnlyLM, data: np.ndarray, *, block_size: int, max_windows: int = 64,
                batch_size: int = 32, rng=0) -> float:
    """Mean next-token cross-entropy (nats per token) on up to ``max_windows`` windows of ``data``.

    Windows start at evenly spaced offsets (deterministic); ``rng`` is unused and kept for symmetry.
    """
    n = data.size - block_size - 1
    if n <= 0:
        raise InputError(f"evaluate_lm: data of {data.size} tokens is too short for block_size {block_size}")
    starts = np.unique(np.linspace(0, n, num=min(max_windows, n + 1)).astype(np.int64))
    loss = CrossEntropyLoss(reduction="sum")
    total, count = 0.0, 0
    was = model.training
    model.eval()
    try:
        with model.no_cache():
            for s in range(0, starts.size, batch_size):
                x, y = _windows(data, starts[s:s + batch_size], block_size)
                total += loss.forward(model.forward(x), y)
                count += y.size
    finally:
        model.train(was)
    return total / count


class _WarmupCosine10:
    """Linear warmup then cosine decay to 10%, indexed from 0 (the trainer's step count)."""

    def __init__(self, lr, warmup, total):
        self.lr, self.warmup, self.total = float(lr), max(1, int(warmup)), max(int(total), int(warmup) + 1)

    def lr_at(self, step):
        if step < self.warmup:
            return self.lr * (step + 1) / self.warmup
        prog = min(1.0, (step - self.warmup) / (self.total - self.warmup))
        return self.lr * (0.1 + 0.9 * 0.5 * (1.0 + np.cos(np.pi * prog)))


def fit_lm(model: DecoderOnlyLM, train_ids: np.ndarray, *, val_ids: np.ndarray | None = None,
           block_size: int = 64, batch_size: int = 32, steps: int = 200, steps_per_epoch: int = 50,
           lr: float = 3e-3, warmup_steps: int = 20, weight_decay: float = 0.0, grad_clip: float | None = 1.0,
           seed: int = 0, progress: bool = False, callbacks=()):
    """Train on random windows of a token stream (nanoGPT-style), with AdamW and warmup + cosine decay.

    Each "epoch" is ``steps_per_epoch`` updates on windows of ``block_size + 1`` tokens starting at
    seeded random offsets; the loss is next-token cross-entropy.  Uses
    :class:`glassformer.train.Trainer` (progress, history, divergence guard).

    Returns
    -------
    glassformer.train.History (``val_loss``: :func:`evaluate_lm` on ``val_ids`` each epoch).
    """
    train_ids = np.asarray(train_ids, dtype=np.int64)
    n_start = train_ids.size - block_size - 1
    if n_start <= 0:
        raise InputError(f"fit_lm: {train_ids.size} training tokens are too few for block_size {block_size}")
    epochs = max(1, int(np.ceil(steps / steps_per_epoch)))
    gen = np.random.default_rng(seed)
    loss = CrossEntropyLoss()

    def step(_batch):
        # Fresh seeded window offsets on every call (the trainer calls step in a fixed order).
        x, y = _windows(train_ids, gen.integers(0, n_start + 1, size=batch_size), block_size)
        value = loss.forward(model.forward(x), y)
        model.backward(loss.backward())
        return value

    if val_ids is not None:
        val_ids = np.asarray(val_ids, dtype=np.int64)

    def eval_step(_batch):
        return evaluate_lm(model, val_ids, block_size=block_size)

    named = list(model.named_parameters())
    opt = AdamW(named, lr=lr, betas=(0.9, 0.99), weight_decay=weight_decay)
    trainer = Trainer(named, step, opt, epochs=epochs, batch_size=1, shuffle=False, seed=seed, grad_clip=grad_clip,
                      schedule=_WarmupCosine10(lr, warmup_steps, epochs * steps_per_epoch),
                      eval_step=eval_step if val_ids is not None else None, model=model,
                      callbacks=[*standard_callbacks(progress=progress), *callbacks])
    dummy_val = (np.zeros(1, dtype=np.int64),) if val_ids is not None else None
    return trainer.fit((np.arange(steps_per_epoch),), dummy_val)
