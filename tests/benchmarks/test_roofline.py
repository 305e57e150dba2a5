"""The roofline's counted work against hand-computed counts (benchmarks/roofline.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import roofline  # noqa: E402


def test_encoder_layer_flops_by_hand():
    # B=1, T=2, E=4, dff=8: q/k/v 2*2*4*12 = 192, scores and A v 2 * (2*1*2*2*4) = 64,
    # out_proj 2*2*4*4 = 64, feed-forward 2 * (2*2*4*8) = 256
    assert roofline._layer_fwd_flops(2, 1, 2, 2, 4, 8) == 192 + 64 + 64 + 256
    assert roofline._layer_fwd_flops(2, 1, 2, 2, 4, 8, out_proj=False) == 192 + 64 + 256


def test_parameter_count_equals_the_layer():
    from glassformer.nn import TransformerEncoderLayer

    layer = TransformerEncoderLayer(8, 2, 16, dropout=0.0, rng=0)
    assert roofline._params(8, 16) == sum(p.data.size for _, p in layer.named_parameters())


def test_training_counts_three_forwards_and_the_adam_traffic():
    flops, nbytes = roofline._training(100.0, 10, 3, 4, "adam")
    assert flops == 300.0
    assert nbytes == 4 * (4 * 10 + (3 + 7) * 3)
    assert roofline._training(100.0, 10, 3, 8, "sgd")[1] == 8 * (4 * 10 + (3 + 3) * 3)


def test_roofline_time_is_the_larger_bound():
    m = roofline.Machine({"float32": 10.0, "float64": 5.0}, 2.0)
    w = roofline.Work(flops=1e9, bytes=1e9, dtype="float32")      # 0.1 s of compute, 0.5 s of memory
    assert w.roofline_s(m) == pytest.approx(0.5) and w.bound(m) == "memory"
    w = roofline.Work(flops=1e10, bytes=1e8, dtype="float64")     # 2 s of compute, 0.05 s of memory
    assert w.roofline_s(m) == pytest.approx(2.0) and w.bound(m) == "compute"


def test_measured_machine_is_positive():
    m = roofline.measure_machine(quick=True)
    assert m.gflops["float32"] > 0 and m.gflops["float64"] > 0 and m.gbps > 0
