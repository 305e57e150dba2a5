"""The Module contract: input checks at the entry point only, inline children, tracing."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.errors import InputError, StateDictError
from glassformer.nn import FeedForward, LayerNorm, Linear, Module, TransformerEncoder, TransformerEncoderLayer


def test_children_skip_checks_and_standalone_modules_keep_them():
    layer = TransformerEncoderLayer(8, 2, 16, dropout=0.0, rng=0)
    stack = TransformerEncoder(layer, 2)
    assert layer.check_inputs and stack.check_inputs
    assert not stack.layers[0].check_inputs and not stack.layers[0].linear1.check_inputs
    x = np.random.default_rng(0).standard_normal((2, 5, 8))
    x[1, 3, 2] = np.nan
    for module in (stack, layer, Linear(8, 3, rng=0), LayerNorm(8)):
        with pytest.raises(InputError, match="non-finite"):
            module.forward(x)


class _Block(Module):
    """A parent that reuses a FeedForward under flat names, as the transformer layers do."""

    def __init__(self):
        super().__init__()
        self.norm = LayerNorm(3)
        self.ffn = FeedForward(3, 5, rng=0)
        self.inline("ffn")

    def forward(self, x):
        return self.ffn(self.norm(x))


def test_inline_child_names_attributes_and_traversal():
    blk = _Block()
    assert list(blk.state_dict()) == ["norm.weight", "norm.bias", "linear1.weight", "linear1.bias",
                                      "linear2.weight", "linear2.bias"]
    assert [n for n, _ in blk.named_modules()] == ["", "norm", "ffn", "linear1", "activation", "dropout", "linear2"]
    assert blk.linear1 is blk.ffn.linear1 and blk.dropout is blk.ffn.dropout
    blk.load_state_dict({k: np.full_like(v, 0.5) for k, v in blk.state_dict().items()})
    assert np.all(blk.ffn.linear2.bias.data == 0.5)
    with pytest.raises(StateDictError, match="ffn.linear1.weight"):
        blk.load_state_dict({**blk.state_dict(), "ffn.linear1.weight": np.zeros((5, 3))})
    blk.eval()
    assert not blk.ffn.dropout.training
    x = np.random.default_rng(0).standard_normal((2, 3))
    with blk.no_cache():
        blk(x)
        assert blk.ffn._cache is None                  # no_cache reaches the inline child
    blk(x)
    assert blk.ffn._cache is not None
    new = Linear(3, 5, rng=1)
    blk.linear1 = new                                  # assignment goes to the child that owns the name
    assert blk.ffn.linear1 is new and "linear1" not in blk._modules
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        blk.nothing
    with pytest.raises(AttributeError, match="no child module"):
        blk.inline("nothing")


def test_tracing_is_switched_on_for_the_subtree_and_restored():
    layer = TransformerEncoderLayer(4, 2, 8, dropout=0.0, rng=0)
    x = np.random.default_rng(1).standard_normal((1, 3, 4))
    layer(x)
    assert "S" not in layer.intermediates()
    with layer.tracing():
        assert all(m._tracing for m in layer.modules())
        layer(x)
    assert not any(m._tracing for m in layer.modules())
    assert layer.intermediates()["S"].shape == (1, 2, 3, 3)
