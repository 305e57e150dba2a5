"""glassformer: a transformer you can read.

Forward and backward passes written by hand in NumPy, every intermediate
inspectable, checked against PyTorch, and applied to well logs (porosity ->
permeability along depth), translation and generation.
"""

from . import errors, nn
from .gradcheck import GradcheckReport, gradcheck

__version__ = "0.1.0"

__all__ = ["GradcheckReport", "errors", "gradcheck", "nn", "__version__"]
