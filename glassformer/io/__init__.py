"""Safe files: atomic writes, model files and training checkpoints.

* :mod:`~glassformer.io.atomic` -- every file is written to a temporary file in the same folder
  and moved over the target only when complete (``atomic_open``, ``atomic_write_text`` ...).
* :mod:`~glassformer.io.archive` -- the npz + JSON pair behind models and checkpoints: arrays
  never pickled, a format version, SHA-256 checksums of the arrays and of the JSON.
* :mod:`~glassformer.io.model` -- ``model.npz`` + ``model.json`` (``save_model``, ``load_model``).
* :mod:`~glassformer.io.checkpoint` -- ``checkpoint.npz`` + ``checkpoint.json`` for resuming training.
"""

from .archive import FORMAT_VERSION
from .atomic import atomic_open, atomic_write_bytes, atomic_write_json, atomic_write_text
from .checkpoint import CHECKPOINT_FORMAT, Checkpoint, load_checkpoint, save_checkpoint
from .model import MODEL_FORMAT, LoadedModel, load_model, load_model_file, save_model, saved_checksum

__all__ = [
    "Checkpoint", "LoadedModel", "MODEL_FORMAT", "CHECKPOINT_FORMAT", "FORMAT_VERSION",
    "atomic_open", "atomic_write_bytes", "atomic_write_json", "atomic_write_text",
    "load_checkpoint", "load_model", "load_model_file", "save_checkpoint", "save_model", "saved_checksum",
]
