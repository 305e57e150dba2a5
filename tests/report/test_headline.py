"""glassformer.report.headline: the model beside its baselines in one sentence and one table; the
sentence says "a baseline is better" exactly when a baseline's test RMSE (or BLEU, ...) beats the model's."""

from __future__ import annotations

import json
import re

import pytest

from glassformer.report import write_report
from glassformer.report.headline import headline_of, sentence, table

UNITS = {"rmse": "log10 mD", "mae": "log10 mD", "r2": "dimensionless"}


def _metrics(model_rmse, baseline_rmse, *, seeds=(42,)):
    """A comparison as run_well_experiment writes it (hand-made numbers)."""
    sd = 0.01 if len(seeds) > 1 else None

    def row(r):
        return {"rmse": r, "rmse_sd": sd, "mae": r * 0.8, "mae_sd": sd, "r2": 1 - r, "r2_sd": sd, "parameters": 10,
                "train_s": 1.5, "train_s_sd": None, "n": 100}

    return {"title": "hand-made", "units": UNITS,
            "comparison": {"split": "test", "seeds": list(seeds),
                           "table": {"transformer": row(model_rmse), "LSTM": row(0.9),
                                     "porosity-permeability transform": row(baseline_rmse),
                                     "training mean": row(1.2)}}}


@pytest.mark.parametrize("model, baseline, better", [(0.5, 0.4, True), (0.5, 0.6, False), (0.5, 0.5, False),
                                                     (0.95, 0.96, True)])   # the LSTM (0.9) beats 0.95
def test_baseline_is_better_exactly_when_a_baseline_rmse_is_lower(tmp_path, model, baseline, better):
    m = _metrics(model, baseline)
    h = headline_of(m)
    assert h.models == ["transformer"] and h.metric == "rmse" and h.where == "the test split"
    text = sentence(h)
    assert ("a baseline is better" in text) is better
    if better:
        name, value = ("LSTM", 0.9) if model > 0.9 else ("porosity-permeability transform", baseline)
        assert text == (f"On the test split, the transformer's RMSE is {model:.4g} log10 mD and the {name}'s is "
                        f"{value:.4g} log10 mD: a baseline is better.")
    else:
        assert text == (f"On the test split, the transformer has the lowest RMSE, {model:.4g} log10 mD, against "
                        f"{min(baseline, 0.9):.4g} log10 mD for the best baseline, the porosity-permeability "
                        "transform.")
    # the same sentence in the page, exactly once, after the headline table
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.json").write_text(json.dumps(m))
    page = write_report(run).read_text(encoding="utf-8")
    assert page.count("a baseline is better") == (1 if better else 0)
    assert page.index('<table id="headline"') < page.index("On the test split")


def test_headline_table_rows_columns_and_spread():
    h = headline_of(_metrics(0.5, 0.4, seeds=(42, 0, 1)))
    html = table(h)
    rows = re.findall(r"<tr( class=\"model\")?><th>([^<]+)</th>", html.split("</tr>", 1)[1])
    assert [name for _, name in rows] == ["transformer", "LSTM", "porosity-permeability transform", "training mean"]
    assert [bool(cls) for cls, _ in rows] == [True, False, False, False]
    heads = re.findall(r"<th>([^<]+)</th>", html.split("</tr>")[0])
    assert heads == ["model", "RMSE (log10 mD)", "MAE (log10 mD)", "R²", "parameters", "fit time (s)", "n"]
    assert '<td class="best num">0.4 ± 0.01</td>' in html           # mean ± sd over seeds, best in bold
    assert '<td class="num">0.5 ± 0.01</td>' in html
    assert "mean over 3 seeds" in sentence(h)


def test_other_kinds_of_run():
    # model + baselines without a comparison (an older run folder)
    h = headline_of({"units": UNITS, "model": {"rmse": 0.3, "n": 5}, "baselines": {"mean": {"rmse": 0.2, "n": 5}}})
    assert h.rows == {"transformer": {"rmse": 0.3, "n": 5}, "mean": {"rmse": 0.2, "n": 5}}
    assert sentence(h).endswith("the mean's is 0.2 log10 mD: a baseline is better.")
    # BLEU: higher is better
    bleu = {"bleu_greedy": 20.0, "bleu_beam": 22.5, "beam_width": 4, "bleu_copy_source": 3.0,
            "bleu_untrained_greedy": 0.1, "n_test_pairs": 500}
    h = headline_of(bleu)
    assert h.metric == "bleu" and not h.lower_is_better and len(h.models) == 2
    assert sentence(h) == ("On the 500 test sentence pairs, the transformer (beam search, width 4) has the highest "
                           "BLEU, 22.5, against 3 for the best baseline, the copy of the source sentence.")
    assert "a baseline is better" in sentence(headline_of({**bleu, "bleu_copy_source": 30.0}))
    # validation loss of a language model against the unigram frequencies
    h = headline_of({"val_loss_nats": 1.6, "unigram_baseline_nats": 3.3, "initial_val_loss_nats": 4.2})
    assert sentence(h) == ("On the validation text, the transformer has the lowest loss, 1.6 nats per character, "
                           "against 3.3 nats per character for the best baseline, the unigram character frequencies.")
    # no baseline at all, and nothing recognisable
    h = headline_of({"test": {"transformer": {"rmse": 0.3, "mae": 0.2}}})
    assert sentence(h) == "On the test split, the transformer's RMSE is 0.3; no baseline was run."
    assert headline_of({"rmse": 0.5}) is None and headline_of(None) is None


def test_fits_to_the_training_data_name_no_winner():
    from glassformer.report.headline import headline_of, sentence

    metrics = {"comparison": {"split": "training interval (depths 1-7 m)", "table": {
        "transformer": {"rmse": 8.1e-07}, "LSTM": {"rmse": 7.8e-08}, "training mean": {"rmse": 29.0}}}}
    h = headline_of(metrics)
    assert h.training
    text = sentence(h)
    assert "a baseline is better" not in text and "memorisation, not which model predicts better" in text
    held_out = headline_of({"comparison": {**metrics["comparison"], "split": "test"}})
    assert not held_out.training and sentence(held_out).endswith("a baseline is better.")


def test_a_blend_that_wins_is_another_model_not_a_baseline():
    m = _metrics(0.5, 0.6)
    table_rows = m["comparison"]["table"]
    table_rows["transformer/boosting blend"] = {**table_rows["training mean"], "rmse": 0.45}
    assert sentence(headline_of(m)) == ("On the test split, the transformer's RMSE is 0.5 log10 mD and the "
                                        "transformer/boosting blend's is 0.45 log10 mD: another model is better.")
    table_rows["transformer/boosting blend"]["rmse"] = 0.55
    assert sentence(headline_of(m)).endswith("against 0.55 log10 mD for the best other model, the "
                                             "transformer/boosting blend.")
