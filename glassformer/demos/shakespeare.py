"""A character-level GPT on tiny Shakespeare: training, validation loss and a sampled passage.

:class:`~glassformer.models.lm.DecoderOnlyLM` (pre-norm, causal, learned positions by default)
trained with :func:`glassformer.models.lm.fit_lm` on the first 90% of
``text/tinyshakespeare/input.txt`` of the data folder (characters; :class:`glassformer.text.CharTokenizer`)
and evaluated on the last 10% (next-character cross-entropy in nats, and bits per character).
The sample is drawn with the key/value cache, temperature 0.8, top-k 20, from a fixed seed.

Measured (seed 0, 2 cores, one BLAS thread, float32): QUICK (108,608 parameters, 500 updates of
32 x 64 characters, ~27 s) 2.18 nats/char; FULL (351,552 parameters, 1,100 updates of 32 x 96
characters, ~220 s) 1.76 nats/char (2.54 bits/char).  Untrained: about 4.2 nats.

For reference: a model that knows only character frequencies scores about 3.3 nats
(the unigram entropy of the training text, reported as ``unigram_baseline_nats``); nanoGPT's
much larger character model reaches about 1.47 nats.

Data: tiny Shakespeare from karpathy/char-rnn (:data:`glassformer.text.SHAKESPEARE_ATTRIBUTION`).

Run folder: ``metrics.json``, ``config.json``, ``history.json``, ``samples.txt``,
``figures/loss.png``, ``figures/attention.png`` (causal self-attention of the last layer on the
start of the validation text), ``model/``.
"""

from __future__ import annotations

import time

import numpy as np

from ..io import atomic_write_text
from ..models.lm import DecoderOnlyLM, evaluate_lm, fit_lm
from ..plots import plot_cross_attention, plot_loss, save_figure
from ..report import write_report
from ..reporting import say
from ..runs import close_figure, prepare_run_dir, write_json
from ..text import SHAKESPEARE_ATTRIBUTION, CharTokenizer, load_shakespeare, split_text
from ..train import PrintLoss
from .common import demo_settings, limit_blas_threads

__all__ = ["QUICK", "FULL", "run_shakespeare"]

#: About 30 s on 2 cores.
QUICK = dict(d_model=64, nhead=4, num_layers=2, dim_feedforward=256, dropout=0.0, block_size=64, batch_size=32,
             steps=500, steps_per_epoch=50, lr=3e-3, warmup_steps=30, positional="learned", dtype="float32")
#: About 3.5 minutes on 2 cores.
FULL = dict(d_model=96, nhead=4, num_layers=3, dim_feedforward=384, dropout=0.0, block_size=96, batch_size=32,
            steps=1100, steps_per_epoch=50, lr=3e-3, warmup_steps=50, positional="learned", dtype="float32")

PROMPT = "ROMEO:\n"


def _unigram_entropy(ids: np.ndarray, vocab: int) -> float:
    p = np.bincount(ids, minlength=vocab).astype(np.float64)
    p = p[p > 0] / p.sum()
    return float(-(p * np.log(p)).sum())


def run_shakespeare(out_dir, *, quick: bool = False, seed: int = 0, progress: bool = True,
                    data_path=None, sample_chars: int = 500, blas_threads: int | None = 1, **overrides) -> dict:
    """Train a character-level LM on tiny Shakespeare into ``out_dir``; returns the metrics.

    Parameters
    ----------
    out_dir : str or Path
    quick : bool
        :data:`QUICK` (about 30 s) instead of :data:`FULL` (a few minutes).
    seed : int
        Initialisation, training windows and the sample.
    progress : bool
        tqdm bar over epochs.
    data_path : path, optional
        ``input.txt`` (default: the shared data folder).
    sample_chars : int, default 500
        Length of the generated sample (bounded by the context: the prompt plus new characters
        must fit in ``block_size``, so the sample is generated in windows; see below).
    blas_threads : int or None, default 1
        BLAS threads during the run (:func:`glassformer.demos.common.limit_blas_threads`).
    **overrides
        Any key of :data:`QUICK` / :data:`FULL`.

    Notes
    -----
    With learned positions the context is ``block_size`` characters, so a long sample is produced
    in chunks: each chunk is generated with the key/value cache from the last ``block_size // 2``
    characters of the text so far.
    """
    cfg = demo_settings("run_shakespeare", quick, QUICK, FULL, overrides)
    out = prepare_run_dir(out_dir)
    with limit_blas_threads(blas_threads):
        return _run(out, cfg, quick=quick, seed=seed, progress=progress, data_path=data_path,
                    sample_chars=sample_chars)


def _run(out, cfg, *, quick, seed, progress, data_path, sample_chars) -> dict:
    t_start = time.perf_counter()
    text = load_shakespeare(data_path)
    train_text, val_text = split_text(text, 0.1)
    tok = CharTokenizer().fit(train_text)
    train_ids = np.asarray(tok.encode(train_text), dtype=np.int64)
    val_ids = np.asarray(tok.encode(val_text), dtype=np.int64)
    B = cfg["block_size"]
    model = DecoderOnlyLM(tok.vocab_size, d_model=cfg["d_model"], nhead=cfg["nhead"], num_layers=cfg["num_layers"],
                          dim_feedforward=cfg["dim_feedforward"], dropout=cfg["dropout"], max_len=B,
                          positional=cfg["positional"], rng=seed, dtype=np.dtype(cfg["dtype"]))
    say(f"shakespeare: {train_ids.size:,} training / {val_ids.size:,} validation characters, "
        f"vocabulary {tok.vocab_size}, {sum(p.size for _, p in model.named_parameters()):,} parameters")
    initial = evaluate_lm(model, val_ids, block_size=B)
    cbs = [PrintLoss(1, "epoch {epoch1}/{epochs}: train loss {loss:.4f}, validation loss {val_loss:.4f}",
                     echo=say)]
    t0 = time.perf_counter()
    hist = fit_lm(model, train_ids, val_ids=val_ids, block_size=B, batch_size=cfg["batch_size"],
                  steps=cfg["steps"], steps_per_epoch=cfg["steps_per_epoch"], lr=cfg["lr"],
                  warmup_steps=cfg["warmup_steps"], seed=seed, progress=progress, callbacks=cbs)
    train_seconds = time.perf_counter() - t0
    final = evaluate_lm(model, val_ids, block_size=B, max_windows=256)

    sample = _sample(model, tok, B, sample_chars, seed)

    metrics = {
        "val_loss_nats": final, "val_bits_per_char": final / np.log(2.0), "initial_val_loss_nats": initial,
        "unigram_baseline_nats": _unigram_entropy(train_ids, tok.vocab_size),
        "final_train_loss": hist.train_loss[-1], "steps": cfg["steps"], "train_seconds": train_seconds,
        "parameters": int(sum(p.size for _, p in model.named_parameters())), "vocab_size": tok.vocab_size,
        "data": SHAKESPEARE_ATTRIBUTION,
    }
    write_json(out / "config.json", {"mode": "quick" if quick else "full", "seed": seed, **cfg})
    write_json(out / "history.json", hist.to_dict())
    _figures(out, model, hist, val_ids, tok, cfg)
    metrics["figures"] = ["loss.png", "attention.png"]
    atomic_write_text(out / "samples.txt",
                      f"Validation loss {final:.4f} nats/char ({final / np.log(2):.3f} bits/char) after "
                      f"{cfg['steps']} updates ({train_seconds:.0f} s).\nSample (temperature 0.8, top-k 20, "
                      f"seed {seed}):\n\n{sample}\n\nData: {SHAKESPEARE_ATTRIBUTION}\n")
    model.save(out / "model", tokenizer=tok, overwrite=True)
    metrics["total_seconds"] = time.perf_counter() - t_start
    write_json(out / "metrics.json", metrics)
    write_report(out)
    say(f"validation loss {final:.4f} nats/char (unigram baseline {metrics['unigram_baseline_nats']:.3f}); sample:")
    say(sample[:300])
    return metrics


def _sample(model, tok, block_size: int, sample_chars: int, seed: int) -> str:
    """A passage continued from :data:`PROMPT` in chunks that fit the context (see :func:`run_shakespeare`)."""
    gen = np.random.default_rng(seed)
    ids = np.asarray(tok.encode(PROMPT), dtype=np.int64)
    keep = max(1, block_size // 2)
    while ids.size < len(PROMPT) + sample_chars:
        ctx = ids[-keep:]
        n_new = min(block_size - ctx.size, len(PROMPT) + sample_chars - ids.size)
        new = model.generate(ctx, n_new, temperature=0.8, top_k=20, rng=gen)[ctx.size:]
        ids = np.concatenate([ids, new])
    return tok.decode(ids)


def _figures(out, model, hist, val_ids, tok, cfg: dict) -> None:
    """The loss curve, and the last layer's causal self-attention on the start of the validation text."""
    ax = plot_loss({"train": hist.train_loss, "val": hist.val_loss}, loss_label="Cross-entropy (nats/char)",
                   title=f"Tiny Shakespeare, character LM ({cfg['steps_per_epoch']} updates per epoch)")
    save_figure(ax, out / "figures" / "loss.png")
    close_figure(ax)
    snippet = val_ids[:min(cfg["block_size"], 40)][None]
    model.eval()
    model.forward(snippet)
    A = model.blocks.layers[len(model.blocks.layers) - 1].self_attn.intermediates()["A"][0].mean(axis=0)
    model.clear_cache()
    model.train()
    labels = ["\u2423" if c == " " else repr(c)[1:-1] for c in tok.decode(snippet[0])]   # visible space, \n
    ax = plot_cross_attention(A, labels, labels, title="Causal self-attention, last layer (mean over heads)")
    ax.set_xlabel("Key character")
    ax.set_ylabel("Query character")
    save_figure(ax, out / "figures" / "attention.png")
    close_figure(ax)


def run(out, *, quick: bool = False, **kwargs) -> dict:
    """Entry point for :func:`glassformer.demos.run_demo` (``glassformer demo shakespeare``)."""
    return run_shakespeare(out, quick=quick, **kwargs)
