"""glassformer.display: what Jupyter shows for a trace (arrays in forward order, attention maps per head)
and for the window regressors (hyperparameters that differ from the defaults, parameter count, fitted)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from glassformer import LSTMRegressor, SequenceRegressor
from glassformer.models import constructor_defaults
from glassformer.report.display import estimator_html, trace_html
from glassformer.trace import Trace


@pytest.fixture(scope="module")
def trace():
    m = SequenceRegressor(d_model=8, num_heads=2, d_ff=12, num_layers=2, positional="sinusoidal", init="torch")
    m.build_network(1)
    X = np.random.default_rng(3).random((2, 5, 1))
    tr = m.trace(X, np.array([3400.0, 3400.5, 3401.0, 3401.5, 3402.0]))
    return Trace(tr, tr.positions, units={"positions": "m", "X": "v/v"})


def _svgs(html):
    return re.findall(r"<svg .*?</svg>", html, flags=re.S)


def test_trace_html_lists_every_array_in_forward_order_with_its_shape(trace):
    html = trace._repr_html_()
    names = re.findall(r"<tr><td class=\"num\">\d+</td><th>([^<]+)</th>", html)
    assert names == list(trace)                               # every array, in the order computed
    assert names.index("E") < names.index("Z") < names.index("layers.0.Q") < names.index("layers.1.H") \
        < names.index("y_hat")
    for key in ("layers.0.A", "layers.1.G", "y_hat"):
        row = re.search(rf"<th>{re.escape(key)}</th>(.*?)</tr>", html).group(1)
        assert f"<td>{tuple(trace[key].shape)}</td>" in row
    assert "<td>(2, 2, 5, 5)</td>" in html and "<td>(2, 5, 12)</td>" in html
    assert "v/v" in html and "weight, 0-1; each row sums to 1" in html        # units where known
    assert "positions 3400 to 3402 m" in html


def test_trace_html_draws_one_svg_per_layer_and_head_with_the_weights(trace):
    html = trace_html(trace, sample=1)
    svgs = _svgs(html)
    assert len(svgs) == 2 * 2                                 # 2 layers x 2 heads
    A = trace["layers.1.A"][1, 0]                             # sequence 1, layer 1, head 0: the third map
    tips = re.findall(r"<rect [^>]*><title>([^<]+)</title>", svgs[2])
    assert len(tips) == 25
    assert tips[1 * 5 + 3] == f"query depth 3400.5 m, key depth 3401.5 m, weight {A[1, 3]:.4g}"
    assert "<script" not in html and "http" not in html and "<link" not in html and "url(" not in html


def test_trace_html_handles_cross_attention_and_long_sequences():
    rng = np.random.default_rng(0)
    cross = rng.dirichlet(np.ones(5), size=(1, 2, 3))         # (batch, heads, target 3, source 5)
    long = rng.dirichlet(np.ones(80), size=(1, 1, 80))        # (1, 1, 80, 80)
    html = trace_html(Trace({"decoder.layers.0.cross.A": cross, "encoder.layers.0.A": long}))
    svgs = _svgs(html)
    assert len(svgs) == 3
    assert len(re.findall(r"<rect ", svgs[0])) == 15 and "key position 5," in svgs[0]
    assert len(re.findall(r"<rect ", svgs[2])) == 64 * 64 and "first 64 of 80 positions" in html
    with pytest.raises(IndexError, match="sample 1 out of range for a batch of 1"):
        trace_html(Trace({"encoder.layers.0.A": long}), sample=1)


def test_plain_repr_stays_short_text(trace):
    text = repr(trace)
    assert "<" not in text and len(text.splitlines()) == len(trace) + 2
    assert text.startswith("Trace(") and "layers.0.A" in text


def test_estimator_html_shows_non_defaults_parameters_and_state():
    m = SequenceRegressor(d_model=8, num_heads=2, positional="sinusoidal", epochs=3, lr=0.01)
    html = m._repr_html_()
    changed = re.findall(r"<tr><th>(\w+)</th><td>([^<]*)</td><td>([^<]*)</td></tr>", html)
    assert changed == [("d_model", "8", "16"), ("epochs", "3", "30"), ("lr", "0.01", "0.003")]
    # num_heads=2 and positional="sinusoidal" are the defaults: not listed
    assert "not fitted" in html
    X = np.random.default_rng(0).random((4, 7, 1))
    m.fit(X, X)
    html = estimator_html(m, constructor_defaults(SequenceRegressor))
    # embedding 8 + 8, in_proj 24 x 8 + 24, out_proj 8 x 8 + 8, linear1 16 x 8 + 16, linear2 8 x 16 + 8,
    # two norms 2 x 16, head 8 + 1
    assert "625 parameters, fitted: 3 epochs (completed), final training loss" in html and "not fitted" not in html
    assert "<th>embedding.linear.weight</th><td>(8, 1)</td>" in html
    assert "Every hyperparameter has its default value." in SequenceRegressor()._repr_html_()
    lstm = LSTMRegressor(hidden_size=4, epochs=1).fit(X, X)._repr_html_()
    assert re.findall(r"<tr><th>(\w+)</th><td>([^<]*)</td><td>([^<]*)</td></tr>", lstm) == [
        ("epochs", "1", "30"), ("hidden_size", "4", "16")]
    assert "233 parameters, fitted: 1 epoch (completed)" in lstm          # 2 x (4*4*(1 + 4) + 2*4*4) + (8 + 1)
    for html in (m._repr_html_(), lstm):
        assert "<script" not in html and "http" not in html


def test_a_backward_trace_lists_the_gradients_after_the_forward_arrays_and_draws_dA_and_dS():
    m = SequenceRegressor.chapter_model()
    m.build_network(1)
    rng = np.random.default_rng(4)
    X, y = rng.uniform(0.1, 0.3, (2, 7, 1)), rng.normal(size=(2, 7))
    tr = m.trace(X, None, y=y, grads=True)
    html = tr._repr_html_()
    names = re.findall(r"<tr><td class=\"num\">\d+</td><th>([^<]+)</th>", html)
    assert names == list(tr) and names.index("y_hat") < names.index("L") < names.index("dy_hat") \
        < names.index("layers.0.dH") < names.index("layers.0.dS") < names.index("dX")
    assert html.index("Backward pass") < html.index("<th>dy_hat</th>")
    assert f"loss L = {float(tr['L']):.6g}" in html
    row = re.search(r"<th>layers\.0\.dA</th>(.*?)</tr>", html).group(1)
    assert "dL/dA: gradient of the loss w.r.t. the attention weights" in row and "<td>(2, 1, 7, 7)</td>" in row
    svgs = _svgs(html)
    assert len(svgs) == 3                                      # A, dA, dS of the one head
    dA = tr["layers.0.dA"][0, 0]
    tips = re.findall(r"<rect [^>]*><title>([^<]+)</title>", svgs[1])
    assert tips[2 * 7 + 5] == f"query position 3, key position 6, dL/dA {dA[2, 5]:.4g}"
    top = float(np.abs(dA).max())
    assert f"colour from {-top:.3g} (blue) through 0 (white) to {top:.3g} (red)" in html
