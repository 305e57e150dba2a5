"""Encoder-decoder transformer for translation (Vaswani et al., 2017, sec. 3).

::

    Z_src = dropout(sqrt(d) * E_src[src] + P(0..S-1))          (batch, S, d_model)
    M     = Encoder(Z_src, key padding = src == PAD)            the memory
    Z_tgt = dropout(sqrt(d) * E_tgt[tgt_in] + P(0..T-1))       (batch, T, d_model)
    H     = Decoder(Z_tgt, M, causal + target padding, memory padding)
    logits = H W_out^T + b_out                                  (batch, T, tgt_vocab)

Source and target have their own embedding tables and their own positional slice, so their
lengths may differ (sharing one table between two languages, or one slice between two lengths, is
a common bug of tutorial implementations).  With
``tie_output=True`` the output projection *is* the target embedding table (Press & Wolf, 2017):
one Parameter used twice, so its gradient is the sum of both uses.

Training uses teacher forcing (:func:`glassformer.models.translation.fit_seq2seq`): the decoder reads ``BOS y_1 .. y_n`` and is
scored against ``y_1 .. y_n EOS`` with label-smoothed cross-entropy, Adam and the Noam warmup
schedule, on batches bucketed by length.  Decoding (greedy and beam search) lives in
:mod:`glassformer.decoding` and uses the incremental methods :meth:`Seq2SeqTransformer.start_decoding`
and :meth:`Seq2SeqTransformer.decode_step` (the same decoder with a key/value cache,
:mod:`glassformer.nn.kv_cache`).

State-dict names: ``src_embed.embedding.weight``, ``tgt_embed.embedding.weight``, ``src_pos.*`` /
``tgt_pos.*`` (learned positions only), ``encoder.layers.<i>.*`` and ``decoder.layers.<i>.*`` with
``torch.nn.TransformerEncoderLayer``/``DecoderLayer`` names, ``encoder.norm.*``/``decoder.norm.*``
(pre-norm only), ``generator.weight``/``generator.bias``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._validation import check_dtype, check_positive_int, check_probability
from ..errors import InputError, ShapeError
from ..nn.dropout import Dropout
from ..nn.input_embedding import TokenEmbedding
from ..nn.kv_cache import AttentionCache
from ..nn.linear import Linear
from ..nn.module import Module, make_rng
from ..nn.normalization import LayerNorm
from ..nn.positional import build_positional
from ..nn.transformer import TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer
from ..trace import Trace
from .persistence import load_configured, save_configured

__all__ = ["Seq2SeqTransformer", "DecoderState"]

MODEL_KIND = "glassformer.Seq2SeqTransformer"
_POSITIONAL = ("sinusoidal", "learned")


def _check_ids(ids, name: str, where: str, vocab: int) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.ndim != 2:
        raise ShapeError(f"{where}: {name} must have shape (batch, seq), got {ids.shape}")
    if ids.dtype.kind not in "iu":
        raise InputError(f"{where}: {name} must hold integer token ids, got dtype {ids.dtype}")
    if ids.size and (ids.min() < 0 or ids.max() >= vocab):
        raise InputError(f"{where}: {name} ids must be in [0, {vocab}), got min {ids.min()} and max {ids.max()}")
    if ids.shape[1] == 0:
        raise ShapeError(f"{where}: {name} is empty along seq (shape {ids.shape})")
    return ids


class DecoderState:
    """What incremental decoding keeps between steps (see :meth:`Seq2SeqTransformer.start_decoding`).

    Attributes
    ----------
    memory : ndarray (batch, S, d_model)
        The encoder output.
    self_caches : list of AttentionCache
        Keys/values of the target positions decoded so far, one per decoder layer.
    memory_kv : list of AttentionCache
        Cross-attention keys/values of the encoder output (static: projected at the first step),
        one per decoder layer.
    src_pad : bool ndarray (batch, S)
        True at padded source positions.
    step : int
        Number of target positions consumed.
    """

    def __init__(self, memory, self_caches, memory_kv, src_pad):
        self.memory, self.self_caches, self.memory_kv, self.src_pad = memory, self_caches, memory_kv, src_pad
        self.step = 0

    @property
    def layer_caches(self) -> list:
        """``(self-attention cache, cross-attention cache)`` per decoder layer."""
        return list(zip(self.self_caches, self.memory_kv))

    def reorder(self, index) -> None:
        """Keep batch rows ``index`` (beam search: the parents of the surviving hypotheses)."""
        for c in self.self_caches + self.memory_kv:
            c.reorder(index)
        self.memory = self.memory[index]
        self.src_pad = self.src_pad[index]


class Seq2SeqTransformer(Module):
    """Transformer encoder-decoder with token embeddings, positional encodings and an output projection.

    Parameters
    ----------
    src_vocab, tgt_vocab : int
        Vocabulary sizes (special ids PAD 0, BOS 1, EOS 2, UNK 3 of :mod:`glassformer.text`).
    d_model : int, default 128
    nhead : int, default 4
    num_encoder_layers, num_decoder_layers : int, default 2
    dim_feedforward : int, default 512
    dropout : float, default 0.1
        On the embedded inputs and inside every layer (training mode only).
    tie_output : bool, default False
        Share the target embedding table with the output projection's weight.
    positional : {"sinusoidal", "learned"}, default "sinusoidal"
    max_len : int, default 256
        Rows of learned position tables (and the longest sequence accepted with them).
    activation : {"relu", "gelu", "gelu_tanh"}, default "relu"
    norm_first : bool, default False
        Post-norm (Vaswani et al.) or pre-norm layers; pre-norm adds a final LayerNorm to each stack.
    pad_id : int, default 0
        Padding id: embedding row kept at zero with no gradient (``padding_idx``), masked as keys.
    rng : int or numpy.random.Generator, optional
        Initialisation and dropout masks.  Embedding rows are N(0, 1/d_model) (so that after the
        ``sqrt(d_model)`` scaling they have unit variance, like the positional encoding); layers use
        PyTorch's initialisation.
    dtype : float64 (default) or float32

    Shapes
    ------
    ``forward(src_ids (batch, S), tgt_in_ids (batch, T)) -> logits (batch, T, tgt_vocab)``;
    ``backward(dlogits)`` adds every parameter gradient and returns None (ids have no gradient).

    Raises
    ------
    InputError / ShapeError for bad arguments or ids (the message names the argument and shape).
    """

    def __init__(self, src_vocab: int, tgt_vocab: int, d_model: int = 128, nhead: int = 4,
                 num_encoder_layers: int = 2, num_decoder_layers: int = 2, dim_feedforward: int = 512,
                 dropout: float = 0.1, *, tie_output: bool = False, positional: str = "sinusoidal",
                 max_len: int = 256, activation: str = "relu", norm_first: bool = False, pad_id: int = 0,
                 rng=None, dtype=np.float64):
        super().__init__()
        where = "Seq2SeqTransformer"
        self.src_vocab = check_positive_int(src_vocab, "src_vocab", where)
        self.tgt_vocab = check_positive_int(tgt_vocab, "tgt_vocab", where)
        self.d_model = check_positive_int(d_model, "d_model", where)
        if positional not in _POSITIONAL:
            raise InputError(f"{where}: positional must be one of {_POSITIONAL}, got {positional!r}")
        if not (isinstance(pad_id, (int, np.integer)) and 0 <= pad_id < min(src_vocab, tgt_vocab)):
            raise InputError(f"{where}: pad_id must be an id of both vocabularies, got {pad_id!r}")
        dt = check_dtype(dtype)
        p = check_probability(dropout, "dropout", where)
        gen = make_rng(rng)
        self.config = dict(src_vocab=int(src_vocab), tgt_vocab=int(tgt_vocab), d_model=int(d_model),
                           nhead=int(nhead), num_encoder_layers=int(num_encoder_layers),
                           num_decoder_layers=int(num_decoder_layers), dim_feedforward=int(dim_feedforward),
                           dropout=p, tie_output=bool(tie_output), positional=positional,
                           max_len=int(max_len), activation=activation, norm_first=bool(norm_first),
                           pad_id=int(pad_id), dtype=dt.name)
        self.pad_id = int(pad_id)
        self.max_len = check_positive_int(max_len, "max_len", where)
        self.src_embed = TokenEmbedding(src_vocab, d_model, padding_idx=pad_id, rng=gen, dtype=dt)
        self.tgt_embed = TokenEmbedding(tgt_vocab, d_model, padding_idx=pad_id, rng=gen, dtype=dt)
        for emb in (self.src_embed, self.tgt_embed):
            emb.embedding.weight.data *= np.asarray(d_model ** -0.5, dtype=dt)
        self.src_pos = build_positional(positional, d_model, nhead, rng=gen, dtype=dt, max_len=max_len)[0]
        self.tgt_pos = build_positional(positional, d_model, nhead, rng=gen, dtype=dt, max_len=max_len)[0]
        self.src_dropout = Dropout(p, rng=gen)
        self.tgt_dropout = Dropout(p, rng=gen)
        enc_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, p, activation, norm_first=norm_first,
                                            rng=gen, dtype=dt)
        dec_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, p, activation, norm_first=norm_first,
                                            rng=gen, dtype=dt)
        self.encoder = TransformerEncoder(enc_layer, num_encoder_layers,
                                          LayerNorm(d_model, dtype=dt) if norm_first else None)
        self.decoder = TransformerDecoder(dec_layer, num_decoder_layers,
                                          LayerNorm(d_model, dtype=dt) if norm_first else None)
        self.generator = Linear(d_model, tgt_vocab, rng=gen, dtype=dt)
        self.tie_output = bool(tie_output)
        if self.tie_output:
            self.generator.weight = self.tgt_embed.embedding.weight   # the same Parameter: gradients add

    # ------------------------------------------------------------------ pieces
    def _positions(self, n: int) -> np.ndarray:
        if n > self.max_len and self.config["positional"] == "learned":
            raise InputError(f"Seq2SeqTransformer: sequence of length {n} exceeds max_len={self.max_len} "
                             "of the learned positional table")
        return np.arange(n)

    def encode(self, src_ids) -> tuple[np.ndarray, np.ndarray]:
        """Encoder pass: returns ``(memory (batch, S, d_model), src_pad (batch, S) bool)``."""
        src = _check_ids(src_ids, "src_ids", "Seq2SeqTransformer.encode", self.src_vocab)
        src_pad = src == self.pad_id
        Z = self.src_dropout(self.src_embed(src) + self.src_pos(self._positions(src.shape[1])))
        return self.encoder(Z, src_key_padding_mask=src_pad), src_pad

    def forward(self, src_ids, tgt_in_ids) -> np.ndarray:
        """Teacher-forced logits ``(batch, T, tgt_vocab)`` for ``tgt_in_ids`` (BOS y_1 .. y_{T-1}).

        Padding (``pad_id``) in either input is masked as keys; the decoder is causal.
        """
        where = "Seq2SeqTransformer.forward"
        tgt = _check_ids(tgt_in_ids, "tgt_in_ids", where, self.tgt_vocab)
        memory, src_pad = self.encode(src_ids)
        if memory.shape[0] != tgt.shape[0]:
            raise ShapeError(f"{where}: src_ids has batch {memory.shape[0]} but tgt_in_ids has batch {tgt.shape[0]}")
        tgt_pad = tgt == self.pad_id
        Z = self.tgt_dropout(self.tgt_embed(tgt) + self.tgt_pos(self._positions(tgt.shape[1])))
        H = self.decoder(Z, memory, tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad,
                         tgt_is_causal=True)
        logits = self.generator(H)
        self._save(done=True)
        return logits

    def backward(self, dlogits) -> None:
        """Back-propagate ``dL/dlogits (batch, T, tgt_vocab)``; adds into every ``.grad``; returns None."""
        self._saved()
        dH = self.generator.backward(np.asarray(dlogits))
        dZt, dmem = self.decoder.backward(dH)
        dZt = self.tgt_dropout.backward(dZt)
        self.tgt_pos.backward(dZt.sum(axis=0))
        self.tgt_embed.backward(dZt)
        dZs = self.src_dropout.backward(self.encoder.backward(dmem))
        self.src_pos.backward(dZs.sum(axis=0))
        self.src_embed.backward(dZs)
        return None

    # ------------------------------------------------------------------ inspection
    def trace(self, src_ids, tgt_in_ids) -> Trace:
        """Every named intermediate of one forward pass (eval mode, no dropout), as a :class:`Trace`.

        Keys
        ----
        ``src.E``, ``src.P``, ``src.Z`` / ``tgt.E``, ``tgt.P``, ``tgt.Z``: embeddings (scaled), positions, sums;
        ``encoder.layers.<i>.<sym>`` with sym in Q, K, V, S, A (per head, ``(batch, nhead, S, S)``), U, T1,
        R, G, F, T2, H; ``memory``;
        ``decoder.layers.<i>.self.<sym>`` and ``decoder.layers.<i>.cross.<sym>`` (sym in Q, K, V, S, A, U,
        O; cross-attention A is ``(batch, nhead, T, S)``: target rows, source columns) and
        ``decoder.layers.<i>.<sym>`` for U1, T1, R1, U2, T2, R2, G, F, T3, H; ``logits``.
        """
        was = self.training
        self.eval()
        try:
            src = _check_ids(src_ids, "src_ids", "Seq2SeqTransformer.trace", self.src_vocab)
            tgt = _check_ids(tgt_in_ids, "tgt_in_ids", "Seq2SeqTransformer.trace", self.tgt_vocab)
            with self.tracing():
                logits = self.forward(src, tgt)
            arrays = {}
            for side, emb, pos, ids in (("src", self.src_embed, self.src_pos, src),
                                        ("tgt", self.tgt_embed, self.tgt_pos, tgt)):
                E = emb.embedding.weight.data[ids] * np.sqrt(self.d_model).astype(self.dtype)
                P = pos.forward(np.arange(ids.shape[1]))
                arrays.update({f"{side}.E": E, f"{side}.P": P, f"{side}.Z": E + P})
            for i, d in enumerate(self.encoder.intermediates()):
                arrays.update({f"encoder.layers.{i}.{k}": v for k, v in d.items()})
            arrays["memory"] = arrays[f"encoder.layers.{len(self.encoder.layers) - 1}.H"]
            if self.encoder.norm is not None:
                arrays["memory"] = self.encoder.norm.forward(arrays["memory"])
            for i, d in enumerate(self.decoder.intermediates()):
                for k, v in d.items():
                    if isinstance(v, dict):
                        arrays.update({f"decoder.layers.{i}.{k}.{s}": a for s, a in v.items()})
                    else:
                        arrays[f"decoder.layers.{i}.{k}"] = v
            arrays["logits"] = logits
            return Trace(arrays)
        finally:
            self.train(was)
            self.clear_cache()

    # ------------------------------------------------------------------ incremental decoding
    def start_decoding(self, src_ids) -> DecoderState:
        """Encode ``src_ids (batch, S)`` and prepare the caches for :meth:`decode_step`.

        Call in ``eval()`` mode inside ``no_cache()`` (as :mod:`glassformer.decoding` does).
        """
        memory, src_pad = self.encode(src_ids)
        n = len(self.decoder.layers)
        return DecoderState(memory, [AttentionCache() for _ in range(n)],
                            [AttentionCache(static=True) for _ in range(n)], src_pad)

    def decode_step(self, state: DecoderState, tokens) -> np.ndarray:
        """Feed the next target token of every row, ``tokens (batch,)``; return next-token logits ``(batch, V)``.

        Equals ``forward(src, prefix)[:, -1]`` for the prefix fed so far (to rounding), at a cost per
        step independent of the prefix length apart from attention over the cache.
        """
        tokens = np.asarray(tokens).reshape(-1, 1)
        t = state.step
        pos = self.tgt_pos.forward(np.array([t]))
        x = self.tgt_embed(tokens) + pos
        x = self.decoder(x, state.memory, memory_key_padding_mask=state.src_pad, tgt_is_causal=True,
                         cache=state.layer_caches)
        state.step += 1
        return self.generator(x)[:, 0]

    # ------------------------------------------------------------------ files
    def save(self, directory, *, src_tokenizer=None, tgt_tokenizer=None, overwrite: bool = False,
             extra: dict | None = None) -> Path:
        """Write ``model.npz`` + ``model.json`` (config) and, if given, ``src_tokenizer.json`` and
        ``tgt_tokenizer.json`` into ``directory``, all atomically (:func:`glassformer.io.save_model`).

        Raises
        ------
        ModelFileError if the model files exist and ``overwrite`` is False.
        """
        directory = Path(directory)
        path = save_configured(self, directory, MODEL_KIND, overwrite=overwrite, extra=extra)
        if src_tokenizer is not None:
            src_tokenizer.save(directory / "src_tokenizer.json")
        if tgt_tokenizer is not None:
            tgt_tokenizer.save(directory / "tgt_tokenizer.json")
        return path

    @classmethod
    def load(cls, directory) -> "Seq2SeqTransformer":
        """Rebuild a model saved by :meth:`save` (its tokenizers: ``WordTokenizer.load(directory /
        "src_tokenizer.json")`` and ``"tgt_tokenizer.json"``).

        Raises
        ------
        ModelFileError for missing, corrupted or foreign files (see :func:`glassformer.io.load_model`).
        """
        return load_configured(cls, directory, MODEL_KIND)

    def extra_repr(self) -> str:
        c = self.config
        return (f"src_vocab={c['src_vocab']}, tgt_vocab={c['tgt_vocab']}, d_model={c['d_model']}, "
                f"nhead={c['nhead']}, tie_output={c['tie_output']}, positional={c['positional']!r}")
