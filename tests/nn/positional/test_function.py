"""positional= a plain function f(positions, d_model) -> (seq, d_model): a student's own encoding,
with no subclass and no registry entry, trains, predicts and traces."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer import SequenceRegressor
from glassformer.errors import InputError, ModelFileError, ShapeError
from glassformer.nn.positional import FunctionPositionalEncoding, build_positional, get_spec, positional_names


def chapter_code(t, d_model):
    """The chapter code's encoding [sin t, cos t, sin t/100, cos t/100], written by hand."""
    return np.column_stack([np.sin(t), np.cos(t), np.sin(t / 100), np.cos(t / 100)])


def prose(t, d_model, wavelengths=(3.0, 40.0)):
    """The chapter prose's sin(2 pi t / lambda), cos(2 pi t / lambda) pairs."""
    angle = 2 * np.pi * t[:, None] / np.repeat(wavelengths, 2)[None, :d_model]
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angle), np.cos(angle))


def _windows(n=12, seq=7, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.05, 0.3, (n, seq, 1))
    y = 3.0 * np.roll(X[..., 0], -1, axis=1) + 0.1 * rng.normal(size=(n, seq))   # the next depth's porosity
    return X, y


def test_a_function_gives_the_same_encoding_and_training_as_the_registered_one():
    enc, hook = build_positional(chapter_code, 4)
    assert isinstance(enc, FunctionPositionalEncoding) and hook is None and not enc.parameters()
    t = np.arange(1.0, 15.0)
    np.testing.assert_allclose(enc(t), build_positional("chapter", 4)[0](t), rtol=0, atol=1e-15)
    X, y = _windows()
    mine = SequenceRegressor.chapter_model(positional=chapter_code, epochs=25).fit(X, y)
    theirs = SequenceRegressor.chapter_model(epochs=25).fit(X, y)
    np.testing.assert_allclose(mine.history_.train_loss, theirs.history_.train_loss, rtol=1e-12)
    np.testing.assert_allclose(mine.predict(X), theirs.predict(X), rtol=1e-12)


def test_the_prose_encoding_trains_and_traces_forward_and_backward():
    X, y = _windows(seed=1)
    model = SequenceRegressor(d_model=4, num_heads=2, positional=prose, epochs=40, lr=1e-2,
                              validation_fraction=None, early_stopping_patience=None).fit(X, y)
    loss = model.history_.train_loss
    assert loss[-1] < 0.5 * loss[0]                                # it learns
    depths = np.arange(1500.0, 1503.5, 0.5)                        # metres
    tr = model.trace(X[:2], depths, y=y[:2], grads=True)
    np.testing.assert_array_equal(tr["P"], prose(depths, 4))
    assert tr["dP"].shape == (7, 4) and np.abs(tr["dP"]).max() > 0
    per_window = np.stack([depths, depths + 10.0])                 # (batch, seq): one call per window
    np.testing.assert_array_equal(model.trace(X[:2], per_window)["P"][1], prose(depths + 10.0, 4))


def test_a_function_is_no_registry_name_and_its_mistakes_are_named():
    spec = get_spec(prose)
    assert spec.name == "prose" and spec.kind == "additive" and "prose" not in positional_names()

    def wrong_width(t, d_model):
        return np.zeros((len(t), d_model + 1))

    def blows_up(t, d_model):
        with np.errstate(divide="ignore"):
            return np.log(t - t[0])[:, None].repeat(d_model, axis=1)

    with pytest.raises(ShapeError, match=r"'wrong_width' must return \(seq, d_model\) = \(7, 4\)"):
        SequenceRegressor(d_model=4, positional=wrong_width).build_network(1).trace(_windows()[0])
    with pytest.raises(InputError, match="'blows_up' returned -inf at position 1, component 1"):
        build_positional(blows_up, 4)[0](np.arange(1.0, 8.0))
    with pytest.raises(InputError, match="takes no options"):
        build_positional(prose, 4, wavelengths=[2.0])


def test_a_model_with_a_function_refuses_to_be_saved(tmp_path):
    X, y = _windows()
    model = SequenceRegressor.chapter_model(positional=chapter_code, epochs=1).fit(X, y)
    with pytest.raises(ModelFileError, match="positional is a Python function"):
        model.save(tmp_path / "m")
    assert not (tmp_path / "m" / "model.json").exists()
