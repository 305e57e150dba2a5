"""Autoregressive decoding for :class:`~glassformer.models.seq2seq.Seq2SeqTransformer`: greedy and beam search.

Both are batched: the only Python loop is over time steps; every step handles all sentences (and
all beams) in one decoder call, using the model's key/value cache
(:meth:`Seq2SeqTransformer.start_decoding` / :meth:`Seq2SeqTransformer.decode_step`).

Output convention (both functions)
----------------------------------
An int64 array ``(batch, L)`` of generated target ids, **without** BOS and **with** EOS: a row that
ends emits ``EOS`` once, then ``PAD`` to the end of the array.  A row that reaches ``max_len``
tokens without EOS stops there with no EOS.  ``L <= max_len`` is the step at which the last row
stopped.  ``WordTokenizer.decode`` stops at EOS, so rows decode directly.

Length penalty (beam search)
----------------------------
Hypotheses are ranked by ``log P(y) / lp(|y|)`` with GNMT's ``lp(n) = ((5 + n) / 6) ** alpha``
(Wu et al., 2016, eq. 14), ``|y|`` counting generated tokens including EOS; ``alpha = 0`` ranks by
the plain log-probability (which favours short outputs), ``alpha = 1`` is close to the per-token
average.  The ranking with the penalty is used at every step to choose the ``beam_width``
surviving hypotheses among all extensions, and at the end to pick the best one.  Finished
hypotheses keep their score and stay in the beam (extended with PAD at no cost) until every beam of
the sentence has finished or ``max_len`` is reached.  With ``beam_width=1`` every extension of the
single hypothesis has the same length, so the ranking is greedy's argmax: the result equals
:func:`greedy_decode`.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ._validation import check_positive_int
from .errors import InputError
from .train.losses import log_softmax
from .text.tokenizers import BOS_ID, EOS_ID, PAD_ID

__all__ = ["greedy_decode", "beam_search", "gnmt_length_penalty"]


def gnmt_length_penalty(length, alpha: float) -> np.ndarray:
    """GNMT's ``((5 + length) / 6) ** alpha`` (Wu et al., 2016, eq. 14); 1 for ``alpha = 0``."""
    return ((5.0 + np.asarray(length, dtype=np.float64)) / 6.0) ** float(alpha)


@contextmanager
def _inference(model):
    """eval() mode and no backward caches for the duration; restores the training flag."""
    was = model.training
    model.eval()
    try:
        with model.no_cache():
            yield
    finally:
        model.train(was)


def _check_src(src_ids, max_len):
    src = np.asarray(src_ids)
    if src.ndim != 2 or src.dtype.kind not in "iu" or src.shape[0] == 0:
        raise InputError(f"decoding: src_ids must be a non-empty integer array (batch, S), got {src.dtype} {src.shape}")
    return src, check_positive_int(max_len, "max_len", "decoding")


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Column indices of the ``k`` largest entries per row, best first; ties go to the lower index.

    ``argpartition`` then a sort of the ``k`` survivors: O(n) per row instead of a full sort.
    With ``k == 1`` this is ``argmax`` (greedy's choice exactly).
    """
    if k == 1:
        return np.argmax(scores, axis=1)[:, None]
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    vals = np.take_along_axis(scores, part, axis=1)
    order = np.lexsort((part, -vals), axis=-1)
    return np.take_along_axis(part, order, axis=1)


def greedy_decode(model, src_ids, max_len: int = 50, *, bos_id: int = BOS_ID, eos_id: int = EOS_ID,
                  pad_id: int = PAD_ID) -> np.ndarray:
    """Translate by taking the most probable next token at every step.

    Parameters
    ----------
    model : Seq2SeqTransformer
        Switched to eval mode (no dropout) for the call; its training flag is restored afterwards.
    src_ids : int array (batch, S)
        Source ids, padded with ``pad_id``.
    max_len : int, default 50
        Most tokens generated per sentence (EOS included).
    bos_id, eos_id, pad_id : int

    Returns
    -------
    int64 array (batch, L), L <= max_len: generated ids without BOS, with EOS, PAD after EOS (see the
    module docstring).  Ties go to the lowest id.
    """
    src, max_len = _check_src(src_ids, max_len)
    N = src.shape[0]
    out = np.full((N, max_len), pad_id, dtype=np.int64)
    done = np.zeros(N, dtype=bool)
    tok = np.full(N, bos_id, dtype=np.int64)
    with _inference(model):
        state = model.start_decoding(src)
        for t in range(max_len):
            logits = model.decode_step(state, tok)
            logits[:, [pad_id, bos_id]] = -np.inf          # never generated
            nxt = np.argmax(logits, axis=-1)
            nxt = np.where(done, pad_id, nxt)
            out[:, t] = nxt
            done |= nxt == eos_id
            tok = nxt
            if done.all():
                return out[:, :t + 1]
    return out


def beam_search(model, src_ids, beam_width: int = 4, max_len: int = 50, *, length_penalty: float = 0.6,
                bos_id: int = BOS_ID, eos_id: int = EOS_ID, pad_id: int = PAD_ID) -> np.ndarray:
    """Translate with beam search and GNMT's length penalty (see the module docstring).

    Parameters
    ----------
    model : Seq2SeqTransformer
    src_ids : int array (batch, S)
    beam_width : int, default 4
        Hypotheses kept per sentence; must not exceed the target vocabulary size.
    max_len : int, default 50
        Most tokens generated per sentence (EOS included).
    length_penalty : float, default 0.6
        GNMT's alpha (>= 0).
    bos_id, eos_id, pad_id : int

    Returns
    -------
    int64 array (batch, L): the best hypothesis per sentence, same convention as :func:`greedy_decode`.

    Raises
    ------
    InputError for a bad ``beam_width``, ``max_len`` or ``length_penalty``.
    """
    src, max_len = _check_src(src_ids, max_len)
    K = check_positive_int(beam_width, "beam_width", "beam_search")
    alpha = float(length_penalty)
    if not np.isfinite(alpha) or alpha < 0:
        raise InputError(f"beam_search: length_penalty must be a finite number >= 0, got {length_penalty!r}")
    N = src.shape[0]
    rows = np.arange(N)[:, None]
    scores = np.full((N, K), -np.inf)
    scores[:, 0] = 0.0                      # all beams start identical: expand only the first
    lengths = np.zeros((N, K), dtype=np.int64)
    finished = np.zeros((N, K), dtype=bool)
    seqs = np.zeros((N, K, 0), dtype=np.int64)
    tok = np.full(N * K, bos_id, dtype=np.int64)
    with _inference(model):
        state = model.start_decoding(np.repeat(src, K, axis=0))
        for _ in range(max_len):
            logits = model.decode_step(state, tok).astype(np.float64)
            logits[:, [pad_id, bos_id]] = -np.inf          # never generated
            logp = log_softmax(logits)
            V = logp.shape[-1]
            if K > V:
                raise InputError(f"beam_search: beam_width {K} exceeds the vocabulary size {V}")
            logp = logp.reshape(N, K, V)
            # A finished hypothesis has one continuation, PAD, at no cost.
            frozen = np.full(V, -np.inf)
            frozen[pad_id] = 0.0
            logp = np.where(finished[..., None], frozen, logp)
            cand = scores[..., None] + logp                                   # (N, K, V)
            new_len = np.where(finished, lengths, lengths + 1)                # (N, K)
            rank = cand / gnmt_length_penalty(new_len, alpha)[..., None]
            flat = rank.reshape(N, K * V)
            top = _top_k(flat, K)
            beam, word = top // V, top % V
            scores = cand.reshape(N, K * V)[rows, top]
            lengths = new_len[rows, beam]
            finished = finished[rows, beam] | (word == eos_id)
            seqs = np.concatenate([seqs[rows, beam], word[..., None]], axis=2)
            state.reorder((rows * K + beam).reshape(-1))
            tok = word.reshape(-1)
            if finished.all():
                break
    final = scores / gnmt_length_penalty(lengths, alpha)
    best = np.argmax(final, axis=1)
    out = seqs[np.arange(N), best]
    return out
