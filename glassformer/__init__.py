"""glassformer: a transformer you can read.

Forward and backward passes written by hand in NumPy, every intermediate
inspectable, checked against PyTorch, and applied to well logs (porosity ->
permeability along depth), translation and generation.
"""

from . import errors, nn
from .gradcheck import GradcheckReport, gradcheck
from . import io, losses, optim  # noqa: E402  (safe files, losses, optimizers and schedules)
from . import text  # noqa: E402  (tokenizers and text corpora)
from .models import SequenceRegressor  # noqa: E402  (the well-log transformer, issue 3)
from .models import LSTMRegressor  # noqa: E402  (the LSTM baseline, issue 6)

__version__ = "0.1.0"

__all__ = ["GradcheckReport", "LSTMRegressor", "SequenceRegressor", "errors", "gradcheck", "io", "losses", "nn", "optim", "text", "__version__"]
