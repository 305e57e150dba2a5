"""The README's "To PyTorch and back" example runs as written, and what it prints is true."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

README = Path(__file__).resolve().parents[2] / "README.md"


def example_code() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## To PyTorch and back", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_torch_example_runs(tmp_path, capsys):
    script = tmp_path / "to_torch_and_back.py"
    script.write_text(example_code(), encoding="utf-8")
    ns = runpy.run_path(str(script))
    X, y, test = ns["X"], ns["y"], ns["test"]
    module, tuned, model = ns["module"], ns["tuned"], ns["model"]
    assert isinstance(ns["optimizer"], torch.optim.AdamW)
    module.eval()
    with torch.no_grad():
        theirs = module(torch.from_numpy(X[test])).numpy()
    assert np.max(np.abs(tuned.predict(X[test]) - theirs)) <= 1e-10      # the weights came back
    assert tuned.score(X[test], y[test]) > model.score(X[test], y[test]) + 0.3   # the fine-tuning helped
    A = ns["trace"]["layers.0.A"]
    assert A.shape == (1, 2, 7, 7)
    np.testing.assert_allclose(A.sum(axis=-1), 1.0, atol=1e-12)
    out = capsys.readouterr().out
    assert re.search(r"held-out R2: -?\d\.\d{3} before, 0\.\d{3} after", out)
