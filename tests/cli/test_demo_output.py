"""`glassformer demo` shows what the demonstrations report: the command installs the reporter's handler, the
demos themselves take no print function."""

from __future__ import annotations

from glassformer.cli import main


def test_demo_shows_the_demonstrations_lines_and_table(tmp_path, monkeypatch, capsys):
    import glassformer.demos as demos
    from glassformer.demos import porosity

    # demonstration 1 with a small budget (the command runs the published 30,000 epochs)
    monkeypatch.setattr(demos, "run_demo", lambda name, out, **kw: porosity.run(out, epochs=30, lstm_epochs=10))
    assert main(["demo", "porosity", "--out", str(tmp_path / "p")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"== demo porosity -> {tmp_path / 'p'}"
    assert out[1] == "Demonstration 1, seven depths: porosity -> permeability at depths 1-7 m, forecast 8-14 m"
    assert [line.split("|")[0] for line in out if line.startswith("Epoch ")] == ["Epoch     0 "]   # every 2000
    assert "Training interval (observed vs predicted, mD):" in out
    assert any(line.startswith("Demonstration 1: seven depths -- training interval") for line in out)
    assert out[-2] == f"Wrote {tmp_path / 'p'}" and out[-1].startswith("== demo porosity done in ")
