"""The registry of positional encodings: one entry per encoding carries everything the models, the
command line and `glassformer check` read about it."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.errors import InputError
from glassformer.nn import MultiheadAttention, RotaryEmbedding, ZeroPositionalEncoding, build_positional
from glassformer.nn.positional import (
    REGISTRY, PositionalSpec, get_spec, positional_names, register,
)
from glassformer.nn.positional.base import PositionalEncoding


def test_names_list_the_additive_kinds_then_the_per_head_ones():
    names = positional_names()
    assert set(names) == {"chapter", "continuous", "fourier", "learned", "none", "rotary", "sinusoidal", "wavelengths"}
    kinds = [REGISTRY[n].kind for n in names]
    assert kinds == sorted(kinds) and names[-1] == "rotary"
    assert (REGISTRY["rotary"].kind, REGISTRY["rotary"].options) == ("per_head", ("base", "interleaved"))


@pytest.mark.parametrize("name", positional_names())
def test_every_entry_describes_itself_and_builds_from_its_gradcheck_settings(name):
    spec = REGISTRY[name]
    assert spec.description and "\n" not in spec.description
    assert set(spec.cli_options) <= set(spec.options) and set(spec.required) <= set(spec.options)
    g = spec.gradcheck
    assert g["positions"] in ("depth", "window", "index") and g["variants"]
    for options in g["variants"]:
        additive, hook = build_positional(name, g["d_model"], g.get("num_heads", 1), rng=0, **options)
        assert isinstance(additive, PositionalEncoding) and additive.d_model == g["d_model"]
        assert (hook is None) == (spec.kind == "additive")
        if spec.d_model_for is not None:
            assert spec.d_model_for(options) == g["d_model"]


def test_per_head_kinds_add_zeros_and_return_the_hook_for_attention():
    additive, hook = build_positional("rotary", 8, 2, interleaved=True)
    assert isinstance(additive, ZeroPositionalEncoding) and not additive(np.arange(3.0)).any()
    assert isinstance(hook, RotaryEmbedding) and hook.head_dim == 4 and hook.interleaved
    MultiheadAttention(8, 2, head_hook=hook)                  # fits the layer it is built for
    with pytest.raises(InputError, match="divisible"):
        build_positional("rotary", 8, 3)


def test_options_required_unknown_max_len_and_former_names():
    assert REGISTRY["wavelengths"].required == ("wavelengths",) and REGISTRY["learned"].required == ("max_len",)
    assert REGISTRY["rotary"].options == ("base", "interleaved")
    table, _ = build_positional("learned", 4, max_len=9, rng=0)       # a model's context length
    assert table.max_len == 9
    build_positional("sinusoidal", 4, max_len=9)                       # ignored by encodings without a table
    with pytest.raises(InputError, match="needs the option wavelengths"):
        build_positional("wavelengths", 4)
    with pytest.raises(InputError, match=r"unknown option\(s\) \['sigma'\]"):
        build_positional("sinusoidal", 4, sigma=1.0)
    with pytest.raises(InputError, match=r"positional name must be one of \[.*'rotary'\], got 'sinusodial'"):
        build_positional("sinusodial", 4)
    assert get_spec("seed").name == "chapter" and get_spec("rope").name == "rotary"   # saved models keep loading


def test_wavelengths_and_chapter_say_which_d_model_they_need():
    assert REGISTRY["wavelengths"].d_model_for({"wavelengths": [1.0, 2.0, 3.0]}) == 6
    assert REGISTRY["chapter"].d_model_for({}) == 4
    assert REGISTRY["sinusoidal"].d_model_for is None
    assert REGISTRY["wavelengths"].cli_options == ("wavelengths",) and REGISTRY["learned"].integer_positions


def test_a_new_encoding_is_one_registration(monkeypatch):
    class Ramp(PositionalEncoding):
        def __init__(self, d_model, slope: float = 1.0, *, dtype=np.float64):
            super().__init__(d_model, dtype)
            self.slope = slope

        def _encode(self, t):
            return np.repeat(self.slope * t[..., None], self.d_model, axis=-1), {}

    monkeypatch.setitem(REGISTRY, "ramp", PositionalSpec("ramp", Ramp, "a straight line (for this test)"))
    assert "ramp" in positional_names()
    enc, hook = build_positional("ramp", 3, slope=2.0)
    assert hook is None and enc(np.array([1.0, 2.0])).tolist() == [[2.0] * 3, [4.0] * 3]
    with pytest.raises(ValueError, match="twice"):
        register(PositionalSpec("ramp", Ramp, "again"))
    with pytest.raises(ValueError, match="kind"):
        register(PositionalSpec("other", Ramp, "bad kind", kind="multiplied"))
