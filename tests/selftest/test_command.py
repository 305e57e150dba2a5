"""`glassformer check`: every check passes on the real layers, one line each, with the exit status."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from glassformer.cli import main
from glassformer.selftest import CHECKS
from glassformer.selftest.published import bug_report

REPO = Path(__file__).resolve().parents[2]


def summary(text: str) -> tuple[int, int]:
    m = re.search(r"^(\d+)/(\d+) checks passed$", text, flags=re.M)
    assert m, text
    return int(m.group(1)), int(m.group(2))


def test_full_run_passes_with_one_line_per_check(capsys):
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert summary(out) == (len(CHECKS), len(CHECKS)) == (55, 55)
    assert lines[:-1] == [f"[ok] {c.name}" for c in CHECKS]
    # what the command promises is really there: the eleven layer properties and the gradchecks
    groups = [c.group for c in CHECKS]
    assert groups.count("properties") == 11
    names = " | ".join(c.name for c in CHECKS)
    for wanted in ("Linear", "Embedding", "LayerNorm", "ReLU", "GELU", "Tanh", "Dropout", "FeedForward",
                   "causal", "boolean attn_mask", "float attn_mask", "key padding", "fully masked", "cross",
                   "TransformerEncoderLayer post-norm", "pre-norm", "mixer='fourier'", "TransformerDecoderLayer",
                   "TransformerEncoder, 2 layers", "TransformerDecoder, 2 layers", "'rotary' gradcheck inside attention",
                   "FourierMixing 2-D", "FourierMixing token axis", "LSTMCell", "LSTM 2 layers"):
        assert wanted in names, wanted
    for key in ("sinusoidal_odd_d_model", "rope_values", "causal_attention", "layernorm_one_feature",
                "layernorm_backward"):
        assert bug_report(key).name in names, key
    for name in ("sinusoidal", "wavelengths", "chapter", "learned", "continuous", "fourier", "none", "rotary"):
        assert f"positional '{name}'" in names
    for name in ("linear", "mlp", "fourier"):
        assert f"input embedding '{name}'" in names


def test_names_cite_what_a_reader_can_find():
    names = [c.name for c in CHECKS]
    assert not [n for n in names if re.search(r"\bB\d\d\b|seed 00\d|issue \d", n)]
    values = [n for n, c in zip(names, CHECKS) if c.group == "values"]
    assert values and all(re.search(r"\(.*(issues? #\d+|\b(19|20)\d\d\b).*\)$", n) for n in values), values


def test_subprocess_exit_status_and_quick_selection():
    res = subprocess.run([sys.executable, "-m", "glassformer", "check", "--quick"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    quick = [c for c in CHECKS if c.group != "gradcheck"]
    assert summary(res.stdout) == (len(quick), len(quick)) == (16, 16)
    assert "gradcheck" not in res.stdout


def test_details_print_the_measured_errors(capsys):
    assert main(["check", "--details", "-k", "gradcheck Linear"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert re.fullmatch(r"\[ok\] gradcheck Linear — max relative error \S+ at \S+ \(3 tensors, tolerance 1e-06\)",
                        lines[0]), lines[0]
    assert lines[1] == "1/1 checks passed" and re.fullmatch(r"\(\d+\.\d s\)", lines[2])


def test_help_says_what_it_does(capsys):
    assert main(["check", "--help"]) == 0
    out = capsys.readouterr().out
    assert "properties" in out and "gradcheck" in out and "--quick" in out and "exit status" in out
    assert "bug reports" in out


def test_no_match_exits_1(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "-k", "no such check"])
    assert exc.value.code == 1
    captured = capsys.readouterr()
    assert "0/0 checks passed" in captured.out
    assert "no check name contains 'no such check'" in captured.err
