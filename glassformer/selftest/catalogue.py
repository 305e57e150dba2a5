"""Every check of ``glassformer check``, in the order printed: properties, gradchecks, published values."""

from __future__ import annotations

from .gradients import gradient_checks
from .properties import property_checks
from .values import value_checks

__all__ = ["CHECKS"]

#: Every check, in the order printed: properties, gradchecks, published values.
CHECKS: tuple = tuple(property_checks() + gradient_checks() + value_checks())
