"""What an estimator's constructor defaults to, for the views that show what a user changed.

The estimators' ``__init__`` only store their arguments (scikit-learn's rule), so the defaults are
the signature's.
"""

from __future__ import annotations

import inspect

__all__ = ["constructor_defaults"]


def constructor_defaults(cls) -> dict:
    """``{argument: default}`` of ``cls.__init__``."""
    return {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
            if name != "self" and p.default is not inspect.Parameter.empty}
