"""The exceptions glassformer raises on purpose.

Every error a user can cause derives from :class:`GlassformerError`, and each
also derives from the built-in exception a Python user would expect
(``ValueError`` for bad values, ``RuntimeError`` for wrong call order), so
``except ValueError`` keeps working.  Messages name *what* is wrong and
*where*: the argument, file, curve or depth, and the shape seen vs. expected.

Hierarchy::

    GlassformerError
    ├── InputError (ValueError)          bad argument: value, dtype, NaN/inf, empty
    │   └── ShapeError                   wrong rank or shape
    ├── DataFileError (ValueError)       a well/text file that cannot be used
    │   ├── CurveNotFoundError           a mnemonic not in the file (lists the available ones)
    │   └── DepthError                   depth column or depth interval problems
    ├── ModelFileError (ValueError)      a model/checkpoint file that cannot be loaded
    ├── StateDictError (ValueError)      missing/unexpected/mis-shaped parameters
    ├── NotReadyError (RuntimeError)     backward before forward, predict before fit
    ├── DivergenceError (FloatingPointError)  training produced a non-finite number
    ├── ClusterError (ConnectionError)   a Dask scheduler that cannot be reached or used
    └── MissingDependencyError (ImportError)  an optional extra is needed (names the pip command)
"""

from __future__ import annotations


class GlassformerError(Exception):
    """Base class of every error glassformer raises deliberately."""


class InputError(GlassformerError, ValueError):
    """An argument has a bad value, dtype, or contains NaN/inf where not allowed."""


class ShapeError(InputError):
    """An array has the wrong rank or shape (the message gives seen vs. expected)."""


class DataFileError(GlassformerError, ValueError):
    """A data file (LAS, CSV, text corpus) cannot be read or used as asked."""


class CurveNotFoundError(DataFileError):
    """A requested curve mnemonic or column is absent; the message lists those present."""


class DepthError(DataFileError):
    """Depth column problems (duplicates, non-monotonic, mixed units) or a bad interval."""


class ModelFileError(GlassformerError, ValueError):
    """A saved model or checkpoint is truncated, corrupted, foreign, pickled or of another version."""


class StateDictError(GlassformerError, ValueError):
    """``load_state_dict`` got missing, unexpected or wrongly shaped entries."""


class NotReadyError(GlassformerError, RuntimeError):
    """A method was called out of order (``backward`` before ``forward``, ``predict`` before ``fit``)."""


class DivergenceError(GlassformerError, FloatingPointError):
    """Training produced a non-finite loss or tensor.

    Attributes
    ----------
    epoch : int or None
        Epoch at which the problem was detected.
    where : str or None
        The first layer and tensor found non-finite, e.g. ``"encoder.layers.0.self_attn: scores"``.
    """

    def __init__(self, message: str, *, epoch: int | None = None, where: str | None = None):
        super().__init__(message)
        self.epoch = epoch
        self.where = where


class ClusterError(GlassformerError, ConnectionError):
    """A Dask scheduler cannot be reached in time, has no workers, or its workers cannot run glassformer."""


class MissingDependencyError(GlassformerError, ImportError):
    """An optional dependency is not installed; the message gives the ``pip install`` command."""
