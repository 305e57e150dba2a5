"""Training and scoring the translation model: arrays of token ids, length-bucketed batches,
teacher-forced cross-entropy with label smoothing, and the tokenizers saved beside a model.

:func:`fit_seq2seq` trains a :class:`~glassformer.models.seq2seq.Seq2SeqTransformer` with the
shared :class:`~glassformer.train.Trainer` (Adam with the Noam warmup of Vaswani et al. 2017,
eq. 3); :func:`evaluate_seq2seq` is the validation cross-entropy.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_positive_int
from ..nn.module import make_rng
from ..train import Trainer, standard_callbacks
from ..train.losses import CrossEntropyLoss
from ..train.optim import Adam
from ..train.schedules import Noam
from .seq2seq import Seq2SeqTransformer

__all__ = ["evaluate_seq2seq", "fit_seq2seq", "length_buckets", "make_translation_arrays"]


def make_translation_arrays(pairs, src_tokenizer, tgt_tokenizer, *, max_len: int = 32):
    """Token ids of sentence pairs for teacher forcing (ragged lists, one array per sentence).

    Source: ``tokens EOS``; decoder input: ``BOS tokens``; decoder target: ``tokens EOS``.
    Sentences longer than ``max_len`` (special tokens included) are truncated, keeping EOS.

    Returns
    -------
    src : list of int64 arrays, tgt : list of int64 arrays (``BOS tokens EOS``; the decoder reads
    ``tgt[:-1]`` and predicts ``tgt[1:]``).
    """
    src, _ = src_tokenizer.encode_batch([s for s, _ in pairs], add_eos=True, max_len=max_len, pad=False)
    tgt, _ = tgt_tokenizer.encode_batch([t for _, t in pairs], add_bos=True, add_eos=True, max_len=max_len + 1,
                                        pad=False)
    return src, tgt


def length_buckets(lengths, batch_size: int, *, chunk_batches: int = 50, rng=None) -> list[np.ndarray]:
    """Group example indices into batches of similar length (less padding), in a seeded random order.

    The examples are shuffled, cut into chunks of ``chunk_batches * batch_size``, each chunk is sorted
    by length and cut into batches; the batches are then shuffled.  (A global sort would make every
    epoch see the same few long batches in a row and would make batch content fully deterministic.)

    Parameters
    ----------
    lengths : int array (n,)
        Length of each example (e.g. the longer of source and target).
    batch_size : int
    chunk_batches : int, default 50
    rng : int or numpy.random.Generator

    Returns
    -------
    list of int arrays, each a batch of example indices.
    """
    lengths = np.asarray(lengths)
    bs = check_positive_int(batch_size, "batch_size", "length_buckets")
    gen = make_rng(rng)
    order = gen.permutation(lengths.size)
    chunk = bs * max(1, int(chunk_batches))
    batches = []
    for s in range(0, order.size, chunk):
        part = order[s:s + chunk]
        part = part[np.argsort(lengths[part], kind="stable")]
        batches.extend(part[i:i + bs] for i in range(0, part.size, bs))
    return [batches[i] for i in gen.permutation(len(batches))]


def _pad(rows, pad_id: int) -> np.ndarray:
    L = max(len(r) for r in rows)
    out = np.full((len(rows), L), pad_id, dtype=np.int64)
    for i, r in enumerate(rows):   # a row copy; the maths is vectorised
        out[i, :len(r)] = r
    return out


def _batch_arrays(src, tgt, idx, pad_id):
    s = _pad([src[i] for i in idx], pad_id)
    t = _pad([tgt[i] for i in idx], pad_id)
    return s, t[:, :-1], t[:, 1:]


def evaluate_seq2seq(model: Seq2SeqTransformer, src, tgt, *, batch_size: int = 256,
                     label_smoothing: float = 0.0) -> float:
    """Mean per-token cross-entropy (nats) of teacher-forced predictions on ragged id lists (eval mode)."""
    loss = CrossEntropyLoss(ignore_index=model.pad_id, label_smoothing=label_smoothing, reduction="sum")
    order = np.argsort([len(t) for t in tgt], kind="stable")
    total, count = 0.0, 0
    was = model.training
    model.eval()
    try:
        with model.no_cache():
            for s in range(0, order.size, batch_size):
                S, Tin, Tout = _batch_arrays(src, tgt, order[s:s + batch_size], model.pad_id)
                total += loss.forward(model.forward(S, Tin), Tout)
                count += int(np.count_nonzero(Tout != model.pad_id))
    finally:
        model.train(was)
    return total / max(count, 1)


class _NoamFromZero:
    """Noam schedule (Vaswani et al. 2017, eq. 3) indexed from 0 as :class:`glassformer.train.Trainer` counts."""

    def __init__(self, d_model: int, warmup_steps: int, factor: float):
        self.noam = Noam(d_model, warmup_steps, factor)

    def lr_at(self, step: int) -> float:
        return self.noam.lr_at(step + 1)


def fit_seq2seq(model: Seq2SeqTransformer, src, tgt, *, val=None, epochs: int = 5, batch_size: int = 64,
                warmup_steps: int = 400, lr_factor: float = 1.0, label_smoothing: float = 0.1,
                betas=(0.9, 0.98), eps: float = 1e-9, grad_clip: float | None = 1.0, seed: int = 0,
                progress: bool = False, callbacks=()):
    """Teacher-forced training with label smoothing, Adam and the Noam schedule, on length buckets.

    Uses :class:`glassformer.train.Trainer` (same progress bar, history and divergence guard as
    the regressor): each *row* the trainer shuffles is one pre-built length bucket, so the trainer's
    seeded permutation shuffles the buckets every epoch (``batch_size=1`` bucket per update).

    Parameters
    ----------
    model : Seq2SeqTransformer
    src, tgt : lists of int arrays
        From :func:`make_translation_arrays` (``tgt`` = ``BOS tokens EOS``).
    val : (src, tgt), optional
        Validation data; its per-token cross-entropy (no smoothing) is recorded each epoch.
    epochs, batch_size : int
    warmup_steps, lr_factor : Noam schedule ``lr = factor * d_model^-0.5 * min(s^-0.5, s * warmup^-1.5)``.
    label_smoothing : float, default 0.1
        ``CrossEntropyLoss(ignore_index=PAD, label_smoothing=...)``.
    betas, eps : Adam settings (Vaswani et al.: 0.9, 0.98, 1e-9).
    grad_clip : float or None
        Global gradient-norm clipping.
    seed : int
        Buckets and their order.

    Returns
    -------
    glassformer.train.History

    Raises
    ------
    DivergenceError on a non-finite loss or gradient (the last good parameters are restored).
    """
    lengths = np.array([max(len(s), len(t)) for s, t in zip(src, tgt)])
    buckets = length_buckets(lengths, batch_size, rng=seed)
    loss = CrossEntropyLoss(ignore_index=model.pad_id, label_smoothing=label_smoothing)

    def step(batch):
        (b,) = batch
        S, Tin, Tout = _batch_arrays(src, tgt, buckets[int(b[0])], model.pad_id)
        value = loss.forward(model.forward(S, Tin), Tout)
        model.backward(loss.backward())
        return value

    def eval_step(_batch):
        return evaluate_seq2seq(model, val[0], val[1])

    named = list(model.named_parameters())
    opt = Adam(named, lr=1e-3, betas=betas, eps=eps)
    trainer = Trainer(named, step, opt, epochs=epochs, batch_size=1, shuffle=True, seed=seed, grad_clip=grad_clip,
                      schedule=_NoamFromZero(model.d_model, max(1, int(warmup_steps)), lr_factor),
                      eval_step=eval_step if val is not None else None, model=model,
                      callbacks=[*standard_callbacks(progress=progress), *callbacks])
    dummy_val = (np.zeros(1, dtype=np.int64),) if val is not None else None
    return trainer.fit((np.arange(len(buckets)),), dummy_val)
