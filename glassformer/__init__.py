"""glassformer: a transformer you can read.

Forward and backward passes written by hand in NumPy, every intermediate inspectable, checked
against PyTorch, and applied to well logs (porosity -> permeability along depth), translation and
generation.  It implements the chapter "Transformers" of Pyrcz, M.J. (2024), Applied Machine
Learning in Python: a Hands-on Guide with Code (doi:10.5281/zenodo.15169139).

=======================  ===================================================================
name                     what it is
=======================  ===================================================================
``SequenceRegressor``    the transformer window regressor (scikit-learn estimator)
``LSTMRegressor``        the LSTM it is compared with
``WellModel``            the well-log job: logs in, a permeability log out, with baselines
``read_well``            a LAS or CSV well as a :class:`~glassformer.data.WellLog`
``gradcheck``            central finite differences for any module's backward
``kernels``              ``with kernels("reference"):`` runs the chapter's plain equations
                         (:mod:`glassformer.nn.reference`) instead of the fast kernels
``nn``                   the layers, each with a hand-written backward
=======================  ===================================================================

The estimators and the well package are imported on first use (they pull in scikit-learn), so
``import glassformer`` and the command line start fast.
"""

from importlib import import_module

from . import errors, nn
from ._version import __version__
from .gradcheck import GradcheckReport, gradcheck
from .nn.tiers import active_kernels, kernels

#: Public names imported on first access: name -> module that defines it.
_LAZY = {"SequenceRegressor": "glassformer.models", "LSTMRegressor": "glassformer.models",
         "WellModel": "glassformer.wells", "read_well": "glassformer.data"}

__all__ = ["GradcheckReport", "LSTMRegressor", "SequenceRegressor", "WellModel", "active_kernels", "errors",
           "gradcheck", "kernels", "nn", "read_well", "__version__"]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    if not name.startswith("_"):
        try:                                   # a sub-package reached as an attribute: glassformer.wells
            return import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module 'glassformer' has no attribute {name!r}")
