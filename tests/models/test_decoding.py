"""Greedy and beam-search decoding: EOS per row, PAD after EOS, beam width 1 = greedy, beam beats greedy."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.decoding import beam_search, gnmt_length_penalty, greedy_decode
from glassformer.errors import InputError
from glassformer.models.seq2seq import Seq2SeqTransformer
from glassformer.nn import Module

PAD, BOS, EOS = 0, 1, 2
V = 8


class _State:
    def __init__(self, rows):
        self.rows = rows
        self.step = 0

    def reorder(self, index):
        self.rows = self.rows[index]


class ScriptedModel(Module):
    """A stand-in decoder whose next-token log-probabilities are a table.

    ``table[kind, step, prev_token]`` gives the logits; ``kind`` is the first source id of the row,
    so different rows of one batch can behave differently.
    """

    def __init__(self, table):
        super().__init__()
        self.table = np.asarray(table, dtype=np.float64)
        self.fed = []

    def start_decoding(self, src):
        return _State(np.asarray(src)[:, 0].copy())

    def decode_step(self, state, tokens):
        self.fed.append(np.asarray(tokens).copy())
        step = min(state.step, self.table.shape[1] - 1)
        out = self.table[state.rows, step, tokens].copy()
        state.step += 1
        return out


def _eos_after(n_tokens_per_kind, max_steps=10):
    """Kind k emits token 4 + k for ``n_tokens_per_kind[k]`` steps, then EOS (logits 0 / -5 elsewhere)."""
    table = np.full((len(n_tokens_per_kind), max_steps, V, V), -5.0)
    for k, n in enumerate(n_tokens_per_kind):
        table[k, :n, :, 4 + k] = 0.0
        table[k, n:, :, EOS] = 0.0
    return table


def test_greedy_stops_at_eos_per_row_and_pads_after():
    model = ScriptedModel(_eos_after([0, 2, 4]))
    src = np.array([[0, 9], [1, 9], [2, 9]])
    out = greedy_decode(model, src, max_len=10)
    np.testing.assert_array_equal(out, [[EOS, PAD, PAD, PAD, PAD],
                                        [5, 5, EOS, PAD, PAD],
                                        [6, 6, 6, 6, EOS]])
    # Only as many steps as the longest row needs; finished rows are fed PAD.
    assert len(model.fed) == 5
    np.testing.assert_array_equal(model.fed[2], [PAD, 5, 6])


def test_greedy_respects_max_len_without_eos():
    model = ScriptedModel(_eos_after([1, 20], max_steps=25))
    out = greedy_decode(model, np.array([[0], [1]]), max_len=6)
    np.testing.assert_array_equal(out, [[4, EOS, PAD, PAD, PAD, PAD], [5, 5, 5, 5, 5, 5]])


def test_beam_search_finds_the_more_probable_sequence_greedy_misses():
    # Step 1: A=4 (p=0.6) or B=5 (p=0.4).  After A every continuation is flat over 4 tokens (p=0.25 each);
    # after B, EOS has p=0.9.  Greedy: A then 0.25 -> P=0.15.  Beam: B EOS -> P=0.36.
    table = np.full((1, 4, V, V), -60.0)   # e^-60: no mass, but no all -inf rows
    table[0, 0, BOS, 4], table[0, 0, BOS, 5] = np.log(0.6), np.log(0.4)
    table[0, 1:, 4, [3, 4, 6, EOS]] = np.log(0.25)
    table[0, 1:, 5, EOS], table[0, 1:, 5, 7] = np.log(0.9), np.log(0.1)
    table[0, 1:, [3, 6, 7], EOS] = 0.0
    src = np.zeros((1, 1), dtype=int)
    greedy = greedy_decode(ScriptedModel(table), src, max_len=4)
    assert greedy[0, 0] == 4
    beam = beam_search(ScriptedModel(table), src, beam_width=2, max_len=4, length_penalty=0.0)
    np.testing.assert_array_equal(beam[0, :2], [5, EOS])
    assert np.all(beam[0, 2:] == PAD)


def test_length_penalty_is_gnmt():
    np.testing.assert_allclose(gnmt_length_penalty([1, 7], 0.6), [1.0, 2.0 ** 0.6])
    np.testing.assert_allclose(gnmt_length_penalty(9, 0.0), 1.0)


def test_length_penalty_changes_the_choice():
    # Short: EOS right away, P = 0.3.  Long: 3 tokens with P = 0.7 * 0.7 * 0.7 * ... then EOS.
    table = np.full((1, 6, V, V), -60.0)
    table[0, 0, BOS, EOS], table[0, 0, BOS, 4] = np.log(0.3), np.log(0.7)
    table[0, 1:, 4, 5] = 0.0
    table[0, 1:, 5, 6] = np.log(0.5)
    table[0, 1:, 5, EOS] = np.log(0.5)
    table[0, 1:, 6, EOS] = 0.0
    src = np.zeros((1, 1), dtype=int)
    # log P: [EOS] -1.204;  [4 5 EOS] -1.050;  [4 5 6 EOS] -1.050.
    raw = beam_search(ScriptedModel(table), src, beam_width=3, max_len=6, length_penalty=0.0)
    np.testing.assert_array_equal(raw[0, :3], [4, 5, EOS])     # tie with the longer one goes to the earlier
    long = beam_search(ScriptedModel(table), src, beam_width=3, max_len=6, length_penalty=1.0)
    np.testing.assert_array_equal(long[0, :4], [4, 5, 6, EOS])


def _model(seed=0):
    return Seq2SeqTransformer(15, 12, d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=2,
                              dim_feedforward=32, dropout=0.1, rng=seed)


SRC = np.array([[5, 6, 7, 2, 0, 0], [9, 2, 0, 0, 0, 0], [4, 5, 6, 7, 8, 2], [11, 12, 4, 2, 0, 0]])


def test_beam_width_one_equals_greedy_on_a_real_model():
    for seed in range(3):
        m = _model(seed)
        m.generator.weight.data *= 8.0           # sharper distributions so EOS appears within max_len
        g = greedy_decode(m, SRC, max_len=12)
        b = beam_search(m, SRC, beam_width=1, max_len=12, length_penalty=0.6)
        np.testing.assert_array_equal(g, b)
        assert m.training                           # the training flag is restored


def test_real_model_output_is_padded_after_eos_and_never_emits_pad_or_bos():
    m = _model(1)
    m.generator.weight.data *= 8.0
    for out in (greedy_decode(m, SRC, max_len=12), beam_search(m, SRC, beam_width=3, max_len=12)):
        assert out.shape[0] == 4 and out.shape[1] <= 12
        for row in out:
            hits = np.flatnonzero(row == EOS)
            body = row[:hits[0]] if hits.size else row
            assert not np.isin(body, [PAD, BOS]).any()
            if hits.size:
                assert np.all(row[hits[0] + 1:] == PAD)


def test_greedy_equals_argmax_of_full_forward():
    m = _model(2)
    m.eval()
    out = greedy_decode(m, SRC, max_len=5)
    prefix = np.ones((4, 1), dtype=int)
    for t in range(out.shape[1]):
        logits = m.forward(SRC, prefix)[:, -1]
        logits[:, [PAD, BOS]] = -np.inf
        nxt = np.argmax(logits, axis=-1)
        done = (out[:, :t] == EOS).any(axis=1)
        np.testing.assert_array_equal(out[~done, t], nxt[~done])
        prefix = np.concatenate([prefix, out[:, t:t + 1]], axis=1)


def test_bad_arguments():
    m = _model()
    with pytest.raises(InputError):
        beam_search(m, SRC, beam_width=0)
    with pytest.raises(InputError):
        beam_search(m, SRC, beam_width=2, length_penalty=-1)
    with pytest.raises(InputError):
        greedy_decode(m, SRC[0], max_len=4)
