"""A broken layer makes its check fail: each topic of `glassformer check` catches a planted bug."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest

import glassformer.nn.functional as functional_module
import glassformer.selftest.published as published
from glassformer.cli import main
from glassformer.nn import (FeedForward, FourierMixing, LayerNorm, MultiheadAttention, RotaryEmbedding,
                            SinusoidalPositionalEncoding)
from glassformer.selftest import CHECKS, Check, run_check, run_checks
from glassformer.selftest.gradients import gradient_checks, registry_entries, zero_formula
from glassformer.selftest.published import bug_report


def _run(only: str) -> tuple[list, int, int]:
    lines = []
    passed, total = run_checks(only=only, echo=lines.append)
    return lines, passed, total


def _failed(lines: list) -> list:
    return [ln.split(" — ")[0][len("[FAIL] "):] for ln in lines if ln.startswith("[FAIL]")]


def test_wrong_layernorm_gradient_fails_and_exits_1(monkeypatch, capsys):
    right = LayerNorm.backward
    monkeypatch.setattr(LayerNorm, "backward", lambda self, g: 1.01 * right(self, g))
    with pytest.raises(SystemExit) as exc:
        main(["check", "-k", "LayerNorm"])
    assert exc.value.code == 1
    out = capsys.readouterr().out
    assert re.search(r"^\[FAIL\] gradcheck LayerNorm \(affine and not\) — .*max relative error", out, flags=re.M)
    assert re.search(rf"^\[FAIL\] {re.escape(bug_report('layernorm_backward').name)} — ", out, flags=re.M)
    passed, total = map(int, re.search(r"^(\d+)/(\d+) checks passed$", out, flags=re.M).groups())
    assert passed < total


def test_wrong_attention_backward_fails_only_attention_checks(monkeypatch):
    right = functional_module.scaled_dot_product_attention_backward

    def wrong(*args, **kwargs):
        dq, dk, dv = right(*args, **kwargs)
        return dq, dk * 1.001, dv            # a 0.1 % error in dL/dK

    monkeypatch.setattr(functional_module, "scaled_dot_product_attention_backward", wrong)
    lines, passed, total = _run("gradcheck")
    attention_users = {c.name for c in CHECKS if c.group == "gradcheck" and re.search(
        r"MultiheadAttention|TransformerDecoder|TransformerEncoder(Layer post|Layer pre|, 2)|inside attention", c.name)}
    assert len(attention_users) == 15 and set(_failed(lines)) == attention_users
    assert passed == total - 15


def test_feedforward_that_mixes_rows_fails_the_token_mixing_properties(monkeypatch):
    right = FeedForward.forward
    # a "position-wise" network that leaks the sequence mean into every row
    monkeypatch.setattr(FeedForward, "forward", lambda self, x: right(self, x) + np.mean(x, axis=-2, keepdims=True))
    lines, _, _ = _run("token mixing")
    assert lines[0].startswith("[ok] property, token mixing: attention mixes tokens")
    assert lines[1].startswith("[FAIL] property, token mixing: the feed-forward network is row-local")
    assert lines[2].startswith("[FAIL] property, token mixing: the feed-forward network changes only row 3 — "
                               "rows changed: [0, 1, 2, 3")
    assert lines[-1] == "1/3 checks passed"


def test_a_raising_check_is_a_failure_not_a_crash(monkeypatch):
    def boom(self, x):
        raise RuntimeError("FFT unavailable")

    monkeypatch.setattr(FourierMixing, "forward", boom)
    lines, passed, total = _run("Fourier")
    ok = [ln for ln in lines[:-1] if ln.startswith("[ok]")]
    failed = [ln for ln in lines[:-1] if ln.startswith("[FAIL]")]
    # Fourier *features* (positional encoding, input embedding) do not use FourierMixing
    assert ok == ["[ok] positional 'fourier' gradcheck",
                  "[ok] gradcheck input embedding 'fourier' (fixed, trainable, with input)"]
    assert len(failed) == 7 and all(ln.endswith("— RuntimeError: FFT unavailable") for ln in failed), failed
    assert lines[-1] == f"2/{total} checks passed" and total == 9
    assert run_check(Check("x", "values", lambda: 1 / 0)) == (False, "ZeroDivisionError: division by zero")


def test_sinusoidal_encoding_with_a_doubled_exponent_fails(monkeypatch):
    right = SinusoidalPositionalEncoding.forward
    # 10000^(-2 * 2i / d_model): the exponent doubled, i.e. the base squared
    monkeypatch.setattr(SinusoidalPositionalEncoding, "forward",
                        lambda self, t: right(SinusoidalPositionalEncoding(self.d_model, base=self.base ** 2), t))
    lines, passed, total = _run("sinusoidal")
    assert set(_failed(lines)) == {"positional 'sinusoidal' fixed, closed form", bug_report("sinusoidal_odd_d_model").name}
    assert (passed, total) == (0, 2)


def test_rope_that_ignores_the_offset_fails(monkeypatch):
    right = RotaryEmbedding.rotate
    monkeypatch.setattr(RotaryEmbedding, "rotate", lambda self, x, positions=None, offset=0.0: right(self, x, positions))
    lines, passed, total = _run("RoPE values")
    assert (passed, total) == (0, 1)
    assert "interleaved offset 2: max |got - expected|" in lines[0] and "half-split offset 2" in lines[0]


def test_attention_that_ignores_is_causal_fails_the_published_case_not_the_gradcheck(monkeypatch):
    right = MultiheadAttention.forward

    def leaky(self, query, key, value, **kwargs):
        kwargs.pop("is_causal", None)       # backward stays consistent, so only the values can tell
        return right(self, query, key, value, **kwargs)

    monkeypatch.setattr(MultiheadAttention, "forward", leaky)
    lines, passed, total = _run("causal")
    assert lines[0] == "[ok] gradcheck MultiheadAttention self, causal"
    assert _failed(lines) == [bug_report("causal_attention").name]
    assert "MultiheadAttention(is_causal=True) output" in lines[1] and (passed, total) == (1, 2)


def test_value_checks_read_the_stored_numbers(monkeypatch):
    stored = published._load()
    changed = copy.deepcopy(stored)
    changed["bug_reports"]["sinusoidal_odd_d_model"]["expected"]["encoding"][1][0] = 0.8415
    monkeypatch.setattr(published, "_load", lambda: copy.deepcopy(changed))
    lines, passed, total = _run("odd d_model")
    assert (passed, total) == (0, 1) and "max |got - expected| = 2.90e-05 (tolerance 1e-08)" in lines[0]


def test_positional_section_runs_what_it_is_given():
    names = [c.name for c in gradient_checks()]
    expected = {}
    for name, _, s in registry_entries():                 # one check per encoding, variants together
        expected.setdefault(name, f"positional '{name}' " + ("gradcheck inside attention" if s.get("per_head") else
                                                              "gradcheck" if s.get("trainable") else
                                                              "fixed, closed form"))
    assert [n for n in names if n.startswith("positional '")] == list(expected.values())
    assert "positional 'rotary' gradcheck inside attention" in names
    # one entry with a wrong closed form: its check fails, and it is the only positional check
    wrong = [("sinusoidal", {}, {"d_model": 6, "positions": "depth", "closed_form": zero_formula})]
    checks = [c for c in gradient_checks(positional=wrong) if c.name.startswith("positional")]
    assert [c.name for c in checks] == ["positional 'sinusoidal' fixed, closed form"]
    ok, detail = run_check(checks[0])
    assert not ok and "values vs closed form" in detail
