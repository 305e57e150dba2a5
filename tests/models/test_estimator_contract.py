"""scikit-learn's estimator contract for the window regressors (SequenceRegressor, LSTMRegressor).

The regressors take 3-D windows ``(n_windows, seq, n_features)``; scikit-learn's generic checks
that fit on 2-D tabular data (``check_regressors_train``, ``check_fit2d_*``, ``check_n_features_in``,
``check_estimators_dtypes``, ``check_fit_idempotent``, ``check_dont_overwrite_parameters``,
``check_estimators_pickle`` -- models are saved as .npz + JSON, never pickled -- and the rest that
build ``make_regression``/``make_blobs`` data) do not apply and are not run.  Every check that
needs no data is run below; what the data checks assert (fit returns self, idempotent fits,
parameters not overwritten, n_features_in_) is asserted on windows by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils import estimator_checks as ec
from sklearn.utils.validation import check_is_fitted

from glassformer import LSTMRegressor, SequenceRegressor
from glassformer.errors import NotReadyError

#: The scikit-learn checks that need no tabular data.
DATA_FREE_CHECKS = ("check_no_attributes_set_in_init", "check_parameters_default_constructible",
                    "check_get_params_invariance", "check_set_params", "check_estimator_cloneable",
                    "check_estimator_repr", "check_estimator_tags_renamed", "check_valid_tag_types",
                    "check_mixin_order", "check_do_not_raise_errors_in_init_or_set_params")


def estimators():
    return [SequenceRegressor(d_model=8, num_heads=2, positional="sinusoidal", positional_options={"base": 100.0},
                              epochs=2),
            SequenceRegressor.chapter_model(epochs=2),
            LSTMRegressor(hidden_size=4, epochs=2)]


def windows(n=20, seq=8, n_features=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, seq, n_features))
    y = X[..., :1].sum(-1) * 2.0 + 0.1 * rng.standard_normal((n, seq))
    return X, y


@pytest.mark.parametrize("check", DATA_FREE_CHECKS)
@pytest.mark.parametrize("index", range(3))
def test_scikit_learns_data_free_checks_pass(check, index):
    est = estimators()[index]
    getattr(ec, check)(type(est).__name__, est)


@pytest.mark.parametrize("index", range(3))
def test_clone_round_trips_parameters_and_drops_what_was_learned(index):
    est = estimators()[index]
    X, y = windows(n_features=1)
    est.fit(X, y)
    twin = clone(est)
    assert twin.get_params() == est.get_params()
    assert not hasattr(twin, "network_") and not hasattr(twin, "is_fitted_")
    check_is_fitted(est)
    with pytest.raises(Exception, match="not fitted"):
        check_is_fitted(twin)
    twin.fit(X, y)
    np.testing.assert_array_equal(twin.predict(X), est.predict(X))          # same seed, same model


def test_init_only_stores_its_arguments():
    options = {"base": 100.0}
    est = SequenceRegressor(positional_options=options, d_ff=None)
    assert est.positional_options is options and est.d_ff is None           # unchanged, not copied
    assert vars(est) == est.get_params()
    est.set_params(d_model=7)                                               # stored, not validated
    assert est.d_model == 7


def test_fit_builds_the_network_from_the_data_and_learned_attributes_end_in_underscore():
    X, y = windows(n=20, seq=8, n_features=2)
    est = SequenceRegressor(d_model=8).fit(X, y)
    assert est.n_features_in_ == 2 and est.n_targets_ == 1
    assert est.network_.embedding.linear.weight.shape == (8, 2)
    assert est.network_.encoder.layers[0].linear1.weight.shape == (16, 8)   # d_ff None -> 2 * d_model
    learned = {name for name in set(vars(est)) - set(est.get_params()) if not name.startswith("_")}
    assert learned and all(name.endswith("_") for name in learned), learned
    assert est.predict(X).shape == (20, 8, 1)
    two = SequenceRegressor(d_model=8, epochs=1).fit(X, np.stack([y, -y], axis=-1))
    assert two.n_targets_ == 2 and two.predict(X).shape == (20, 8, 2)


def test_fit_returns_self_is_idempotent_and_does_not_change_the_parameters():
    X, y = windows(n_features=1)
    for est in estimators():
        before = est.get_params()
        assert est.fit(X, y) is est
        first = est.predict(X)
        est.fit(X, y)
        np.testing.assert_array_equal(est.predict(X), first)
        assert est.get_params() == before


def test_the_default_model_is_the_well_model_the_cli_trains():
    p = SequenceRegressor().get_params()
    assert {k: p[k] for k in ("d_model", "num_heads", "d_ff", "num_layers", "positional", "attn_out_proj", "init",
                              "optimizer", "lr", "batch_size", "epochs", "grad_clip", "early_stopping_patience",
                              "validation_fraction", "random_state")} == {
        "d_model": 16, "num_heads": 2, "d_ff": None, "num_layers": 1, "positional": "sinusoidal",
        "attn_out_proj": True, "init": "torch", "optimizer": "adam", "lr": 3e-3, "batch_size": 32, "epochs": 30,
        "grad_clip": 1.0, "early_stopping_patience": 5, "validation_fraction": 0.1, "random_state": 42}
    c = SequenceRegressor.chapter_model().get_params()
    assert (c["d_model"], c["num_heads"], c["d_ff"], c["positional"], c["init"], c["optimizer"], c["lr"],
            c["batch_size"], c["attn_out_proj"]) == (4, 1, 16, "chapter", "chapter", "sgd", 0.01, None, False)


def test_an_untrained_network_can_be_inspected_but_not_used_to_predict():
    X, y = windows(n_features=1)
    est = SequenceRegressor(d_model=8)
    est.build_network(1)
    assert est.trace(X)["y_hat"].shape == (20, 8, 1)
    with pytest.raises(NotReadyError, match="not fitted"):
        est.predict(X)
    with pytest.raises(Exception, match="not fitted"):
        check_is_fitted(est)
