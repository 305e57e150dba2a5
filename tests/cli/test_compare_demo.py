"""`glassformer compare --demo NAME` runs the demonstration's comparison through the demo catalogue."""

from __future__ import annotations

import json

from glassformer.cli import main


def test_compare_demo_writes_the_comparison(tmp_path, capsys):
    out = tmp_path / "porosity"
    assert main(["compare", "--demo", "porosity", "--epochs", "3", "--seeds", "1", "--out", str(out)]) == 0
    assert f"Comparison written to {out}" in capsys.readouterr().out
    comp = json.loads((out / "metrics.json").read_text())["comparison"]
    assert comp["seeds"] == [42] and {"transformer", "LSTM", "training mean"} <= set(comp["table"])
    assert (out / "report.html").is_file()
