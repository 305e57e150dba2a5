"""glassformer: a transformer you can read.

Forward and backward passes written by hand in NumPy, every intermediate
inspectable, checked against PyTorch, and applied to well logs (porosity ->
permeability along depth), translation and generation.
"""

from . import errors, io, nn, selection, text, train
from .gradcheck import GradcheckReport, gradcheck
from .models import LSTMRegressor, SequenceRegressor

__version__ = "0.1.0"

__all__ = [
    "GradcheckReport", "LSTMRegressor", "SequenceRegressor", "errors", "gradcheck", "io", "nn", "selection",
    "text", "train", "__version__",
]
