"""`glassformer check`: everything passes on the real layers, and a broken layer is caught."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import glassformer.nn.functional as functional_module
from glassformer.check import CHECKS, Check, run_check, run_checks
from glassformer.cli import main
from glassformer.nn import FeedForward, FourierMixing, LayerNorm

REPO = Path(__file__).resolve().parents[1]


def _summary(text: str) -> tuple[int, int]:
    m = re.search(r"^(\d+)/(\d+) checks passed$", text, flags=re.M)
    assert m, text
    return int(m.group(1)), int(m.group(2))


def test_full_run_passes_with_one_line_per_check(capsys):
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert _summary(out) == (len(CHECKS), len(CHECKS))
    assert lines[:-1] == [f"[ok] {c.name}" for c in CHECKS]
    # what the brief asks for is really there: seed 004's eleven properties and the gradchecks
    groups = [c.group for c in CHECKS]
    assert groups.count("seed004") == 11
    names = " | ".join(c.name for c in CHECKS)
    for wanted in ("Linear", "Embedding", "LayerNorm", "ReLU", "GELU", "Tanh", "Dropout", "FeedForward",
                   "causal", "boolean attn_mask", "float attn_mask", "key padding", "fully masked", "cross",
                   "TransformerEncoderLayer post-norm", "pre-norm", "mixer='fourier'", "TransformerDecoderLayer",
                   "TransformerEncoder, 2 layers", "TransformerDecoder, 2 layers", "RotaryEmbedding",
                   "FourierMixing 2-D", "FourierMixing token axis", "LSTMCell", "LSTM 2 layers", "B03", "B08",
                   "B13", "B14"):
        assert wanted in names, wanted
    for name in ("sinusoidal", "wavelengths", "chapter", "learned", "continuous", "fourier", "none", "rotary"):
        assert f"positional '{name}'" in names
    for name in ("linear", "mlp", "fourier"):
        assert f"input embedding '{name}'" in names


def test_subprocess_exit_status_and_quick_selection():
    res = subprocess.run([sys.executable, "-m", "glassformer", "check", "--quick"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    quick = [c for c in CHECKS if c.group != "gradcheck"]
    assert _summary(res.stdout) == (len(quick), len(quick)) == (16, 16)
    assert "gradcheck" not in res.stdout


def test_help_says_what_it_does(capsys):
    assert main(["check", "--help"]) == 0
    out = capsys.readouterr().out
    assert "seed 004" in out and "gradcheck" in out and "--quick" in out and "exit status" in out


def test_wrong_layernorm_gradient_fails_and_exits_1(monkeypatch, capsys):
    right = LayerNorm.backward
    monkeypatch.setattr(LayerNorm, "backward", lambda self, g: 1.01 * right(self, g))
    with pytest.raises(SystemExit) as exc:
        main(["check", "-k", "LayerNorm"])
    assert exc.value.code == 1
    out = capsys.readouterr().out
    assert re.search(r"^\[FAIL\] gradcheck LayerNorm \(affine and not\) — .*max relative error", out, flags=re.M)
    assert re.search(r"^\[FAIL\] B14 LayerNorm backward values — ", out, flags=re.M)
    passed, total = _summary(out)
    assert passed < total


def test_wrong_attention_backward_fails_only_attention_checks(monkeypatch):
    right = functional_module.scaled_dot_product_attention_backward

    def wrong(*args, **kwargs):
        dq, dk, dv = right(*args, **kwargs)
        return dq, dk * 1.001, dv            # a 0.1 % error in dL/dK

    monkeypatch.setattr(functional_module, "scaled_dot_product_attention_backward", wrong)
    lines = []
    passed, total = run_checks(only="gradcheck", echo=lines.append)
    failed = {ln.split(" — ")[0][len("[FAIL] "):] for ln in lines if ln.startswith("[FAIL]")}
    attention_users = {c.name for c in CHECKS if c.group == "gradcheck" and re.search(
        r"MultiheadAttention|TransformerDecoder|TransformerEncoder(Layer post|Layer pre|, 2)", c.name)}
    assert len(attention_users) == 15 and failed == attention_users
    assert passed == total - 15


def test_seed004_check_catches_a_feedforward_that_mixes_rows(monkeypatch):
    right = FeedForward.forward
    # a "position-wise" network that leaks the sequence mean into every row
    monkeypatch.setattr(FeedForward, "forward", lambda self, x: right(self, x) + np.mean(x, axis=-2, keepdims=True))
    lines = []
    run_checks(only="P-block", echo=lines.append)
    assert lines[0].startswith("[ok] seed 004 P-block: attention mixes tokens")
    assert lines[1].startswith("[FAIL] seed 004 P-block: feed-forward is row-local")
    assert lines[2].startswith("[FAIL] seed 004 P-block: feed-forward changes only row 3 — rows changed: [0, 1, 2, 3")
    assert lines[-1] == "1/3 checks passed"


def test_a_raising_check_is_a_failure_not_a_crash(monkeypatch):
    def boom(self, x):
        raise RuntimeError("FFT unavailable")

    monkeypatch.setattr(FourierMixing, "forward", boom)
    lines = []
    passed, total = run_checks(only="Fourier", echo=lines.append)
    ok = [ln for ln in lines[:-1] if ln.startswith("[ok]")]
    failed = [ln for ln in lines[:-1] if ln.startswith("[FAIL]")]
    # Fourier *features* (positional encoding, input embedding) do not use FourierMixing
    assert ok == ["[ok] positional 'fourier' gradcheck",
                  "[ok] gradcheck input embedding 'fourier' (fixed, trainable, with input)"]
    assert len(failed) == 7 and all(ln.endswith("— RuntimeError: FFT unavailable") for ln in failed), failed
    assert lines[-1] == f"2/{total} checks passed" and total == 9
    assert run_check(Check("x", "values", lambda: 1 / 0)) == (False, "ZeroDivisionError: division by zero")


def test_no_match_exits_1(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "-k", "no such check"])
    assert exc.value.code == 1
    assert "0/0 checks passed" in capsys.readouterr().out
