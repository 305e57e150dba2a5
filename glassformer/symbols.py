"""The chapter's symbols (Pyrcz 2024, "Transformers") in words, for every view of a forward pass.

One table that the trace, its HTML view and the figures read, so a symbol means one thing everywhere.
"""

__all__ = ["SYMBOLS"]

#: What each symbol is, by its last dotted component (``layers.0.A`` -> ``A``), for displays.
SYMBOLS = {
    "X": "the inputs as given", "E": "input embedding", "P": "positional encoding", "Z": "E + P, the encoder input",
    "Q": "queries, per head", "K": "keys, per head", "V": "values, per head", "S": "scaled scores Q K^T / sqrt(d_k)",
    "A": "attention weights, softmax of S", "U": "attention output", "O": "attention output after projection",
    "T1": "first residual sum", "R": "LayerNorm of T1", "G": "feed-forward hidden activations",
    "F": "feed-forward output", "T2": "second residual sum", "H": "LayerNorm of T2, the layer output",
    "y_hat": "prediction, linear head on H", "memory": "encoder output read by the decoder",
    "logits": "output scores over the vocabulary", "y": "target", "L": "loss: mean squared error over observed targets",
}
#: ... and each gradient of the backward trace, ``dA`` = dL/dA and so on.
SYMBOLS.update({f"d{sym}": f"dL/d{sym}: gradient of the loss w.r.t. the {what[0].lower()}{what[1:]}"
                for sym, what in list(SYMBOLS.items()) if sym not in ("L", "y", "memory", "logits", "O")})
