"""English -> French translation on real Tatoeba sentence pairs, trained with real gradients.

The encoder-decoder and greedy translation of Vaswani et al. (2017), trained with real gradients:
this demo trains :class:`~glassformer.models.seq2seq.Seq2SeqTransformer` on pairs from
``text/fra-eng/fra.txt`` of the data folder and measures it:

* data: pairs with at most 8 words on each side (127,422), split deterministically by
  :func:`glassformer.text.split_pairs` (grouped by English sentence, ``seed``): 1,000 test pairs,
  500 validation pairs, and a random subset of the rest for training;
* word tokenizers fitted on the training subset only (lowercased, punctuation split);
* teacher forcing, label-smoothed cross-entropy (0.1), Adam (0.9, 0.98, 1e-9) with the Noam
  warmup schedule, length-bucketed batches (:func:`glassformer.models.translation.fit_seq2seq`);
* BLEU (sacrebleu, default 13a tokenisation) on the 1,000 test pairs for greedy and beam
  decoding, against two baselines: the untrained model and copying the English source.
  References are the French sentences in the tokenizer's normal form (lowercase, spacing
  normalised), because the model writes lowercase.

Measured (seed 0, 2 shared cores, one BLAS thread, float32; BLEU on the 1,000 test pairs):

=========  ============  ==========  ==============  ===========  =========  ===============
settings   train pairs   train time  greedy          beam (4)     copy src   untrained model
=========  ============  ==========  ==============  ===========  =========  ===============
QUICK      20,000        ~100 s      18.4            20.1         0.39       0.00
FULL       40,000        ~275 s      25.3            26.4         0.39       0.00
=========  ============  ==========  ==============  ===========  =========  ===============

Data: Tatoeba (CC BY 2.0), see :data:`glassformer.text.TATOEBA_ATTRIBUTION`.

Run folder: ``metrics.json``, ``config.json``, ``history.json``, ``samples.txt`` (example
translations and the attribution), ``figures/loss.png``, ``figures/cross_attention_<i>.png``
(source words x target words, last decoder layer, mean over heads), ``model/`` (model + tokenizers).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import sacrebleu

from ..decoding import beam_search, greedy_decode
from ..io import atomic_write_text
from ..models.seq2seq import Seq2SeqTransformer
from ..models.translation import fit_seq2seq, make_translation_arrays
from ..plots import plot_cross_attention, plot_loss, save_figure
from ..report import write_report
from ..reporting import say
from ..runs import close_figure, prepare_run_dir, write_json
from ..text import TATOEBA_ATTRIBUTION, WordTokenizer, load_pairs, split_pairs
from ..train import PrintLoss
from .common import demo_settings, limit_blas_threads

__all__ = ["QUICK", "FULL", "prepare_translation", "train_translation", "bleu", "translate_texts",
           "run_translate"]

#: CI-sized run (about 100 s in all on 2 cores: 90 s training, then decoding and BLEU).
QUICK = dict(n_train=20000, max_vocab=2000, d_model=64, nhead=4, num_layers=2, dim_feedforward=256,
             dropout=0.1, epochs=6, batch_size=64, warmup_steps=300, lr_factor=1.0, dtype="float32")
#: The demo (about 3.5 minutes in all on 2 cores).
FULL = dict(n_train=40000, max_vocab=3000, d_model=64, nhead=4, num_layers=2, dim_feedforward=256,
            dropout=0.1, epochs=6, batch_size=64, warmup_steps=400, lr_factor=1.0, dtype="float32")

N_TEST, N_VALID = 1000, 500
MAX_LEN = 24


def prepare_translation(*, n_train: int, max_vocab: int, seed: int = 0, path=None):
    """Load, filter (<= 8 words), split and tokenize the pairs.

    Returns
    -------
    dict with ``train``/``valid``/``test`` pair lists, ``src_tok``/``tgt_tok`` (WordTokenizers fitted on
    the training subset) and ``train_ids``/``valid_ids`` (ragged id lists from
    :func:`make_translation_arrays`).
    """
    pairs = load_pairs(path, max_words=8)
    split = split_pairs(pairs, N_TEST, N_VALID, seed=seed)
    train = split.train[:n_train]                # split.train is already in seeded random order
    src_tok = WordTokenizer(max_vocab=max_vocab).fit([e for e, _ in train])
    tgt_tok = WordTokenizer(max_vocab=max_vocab, french_spacing=True).fit([f for _, f in train])
    return {"train": train, "valid": split.valid, "test": split.test, "src_tok": src_tok, "tgt_tok": tgt_tok,
            "train_ids": make_translation_arrays(train, src_tok, tgt_tok),
            "valid_ids": make_translation_arrays(split.valid, src_tok, tgt_tok)}


def build_model(data, cfg: dict, seed: int = 0) -> Seq2SeqTransformer:
    """The model of ``cfg`` (a :data:`QUICK`/:data:`FULL`-style dict) for the data's vocabularies."""
    return Seq2SeqTransformer(data["src_tok"].vocab_size, data["tgt_tok"].vocab_size, d_model=cfg["d_model"],
                              nhead=cfg["nhead"], num_encoder_layers=cfg["num_layers"],
                              num_decoder_layers=cfg["num_layers"], dim_feedforward=cfg["dim_feedforward"],
                              dropout=cfg["dropout"], tie_output=True, rng=seed, dtype=np.dtype(cfg["dtype"]))


def train_translation(data, cfg: dict, *, seed: int = 0, progress: bool = False):
    """Build and train a model on ``data`` (see :func:`prepare_translation`); returns ``(model, history)``."""
    model = build_model(data, cfg, seed)
    cbs = [PrintLoss(1, "epoch {epoch1}/{epochs}: train loss {loss:.4f}, validation cross-entropy {val_loss:.4f}",
                     echo=say)]
    hist = fit_seq2seq(model, *data["train_ids"], val=data["valid_ids"], epochs=cfg["epochs"],
                       batch_size=cfg["batch_size"], warmup_steps=cfg["warmup_steps"], lr_factor=cfg["lr_factor"],
                       label_smoothing=0.1, seed=seed, progress=progress, callbacks=cbs)
    return model, hist


def translate_texts(model, src_tok, tgt_tok, texts, *, beam_width: int = 1, max_len: int = MAX_LEN,
                    batch_size: int = 500) -> list[str]:
    """Translate English ``texts``: greedy when ``beam_width == 1``, else beam search (length penalty 0.6)."""
    out = []
    for s in range(0, len(texts), batch_size):
        src, _ = src_tok.encode_batch(list(texts[s:s + batch_size]), add_eos=True, max_len=32)
        if beam_width == 1:
            ids = greedy_decode(model, src, max_len)
        else:
            ids = beam_search(model, src, beam_width, max_len)
        out.extend(tgt_tok.decode(row) for row in ids)
    return out


def bleu(hypotheses, references) -> float:
    """Corpus BLEU (sacrebleu, 13a tokenisation) of hypotheses against one reference each."""
    return float(sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score)


def evaluate_bleu(model, data, *, beam_width: int = 4, untrained=None) -> dict:
    """BLEU on the test pairs: greedy, beam, copy-the-source baseline and (optionally) an untrained model."""
    src_tok, tgt_tok = data["src_tok"], data["tgt_tok"]
    english = [e for e, _ in data["test"]]
    refs = [tgt_tok.normalize(f) for _, f in data["test"]]
    out = {}
    t0 = time.perf_counter()
    greedy = translate_texts(model, src_tok, tgt_tok, english)
    out["greedy_seconds"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    beam = translate_texts(model, src_tok, tgt_tok, english, beam_width=beam_width)
    out["beam_seconds"] = time.perf_counter() - t0
    out.update(bleu_greedy=bleu(greedy, refs), bleu_beam=bleu(beam, refs),
               bleu_copy_source=bleu([src_tok.normalize(e) for e in english], refs), beam_width=beam_width,
               hypotheses_greedy=greedy, hypotheses_beam=beam, references=refs)
    if untrained is not None:
        out["bleu_untrained_greedy"] = bleu(translate_texts(untrained, src_tok, tgt_tok, english), refs)
    return out


def _cross_attention_figures(model, data, fig_dir: Path, n: int = 3) -> list[str]:
    """Heat maps of the last decoder layer's cross-attention (mean over heads) for ``n`` test sentences."""
    src_tok, tgt_tok = data["src_tok"], data["tgt_tok"]
    english = [e for e, _ in data["test"][:50]]
    # Pick the first n sentences with at least 4 source words: small maps say little.
    chosen = [e for e in english if len(src_tok.tokenize(e)) >= 4][:n]
    files = []
    for i, text in enumerate(chosen):
        src, _ = src_tok.encode_batch([text], add_eos=True)
        out = greedy_decode(model, src, MAX_LEN)[0]
        out = out[out != 0]
        tgt_in = np.concatenate([[1], out[:-1]])[None]
        tr = model.trace(src, tgt_in)
        last = len(model.decoder.layers) - 1
        A = tr[f"decoder.layers.{last}.cross.A"][0].mean(axis=0)      # (T, S)
        src_labels = [src_tok.id_to_token(int(t)) for t in src[0]]
        tgt_labels = [tgt_tok.id_to_token(int(t)) for t in out]
        heads = model.config["nhead"]
        ax = plot_cross_attention(A, src_labels, tgt_labels,
                                  title=f"Cross-attention, decoder layer {last + 1}, mean of {heads} heads")
        path = fig_dir / f"cross_attention_{i}.png"
        save_figure(ax, path)
        close_figure(ax)
        files.append(path.name)
    return files


def run_translate(out_dir, *, quick: bool = False, seed: int = 0, progress: bool = True,
                  data_path=None, blas_threads: int | None = 1, **overrides) -> dict:
    """Train, evaluate and document an English->French model in ``out_dir``; returns the metrics.

    Parameters
    ----------
    out_dir : str or Path
        Run folder (created; existing files are replaced).
    quick : bool
        :data:`QUICK` (CI-sized) instead of :data:`FULL` settings.
    seed : int
        Split, tokenizer subset, initialisation, buckets.
    progress : bool
        tqdm progress bar over epochs.
    data_path : path, optional
        ``fra.txt`` (default: the shared data folder, see :func:`glassformer.text.load_pairs`).
    blas_threads : int or None, default 1
        BLAS threads during the run (:func:`glassformer.demos.common.limit_blas_threads`); None leaves the
        setting alone.
    **overrides
        Any key of :data:`QUICK` / :data:`FULL` (e.g. ``epochs=2``).

    Returns
    -------
    dict: ``bleu_greedy``, ``bleu_beam``, ``bleu_copy_source``, ``bleu_untrained_greedy``, final losses,
    sizes and timings (also written to ``metrics.json``).
    """
    cfg = demo_settings("run_translate", quick, QUICK, FULL, overrides)
    out = prepare_run_dir(out_dir)
    with limit_blas_threads(blas_threads):
        return _run(out, cfg, quick=quick, seed=seed, progress=progress, data_path=data_path)


def _run(out: Path, cfg: dict, *, quick, seed, progress, data_path) -> dict:
    t_start = time.perf_counter()
    data = prepare_translation(n_train=cfg["n_train"], max_vocab=cfg["max_vocab"], seed=seed, path=data_path)
    say(f"translate: {len(data['train'])} training pairs, vocabularies {data['src_tok'].vocab_size} (en) / "
        f"{data['tgt_tok'].vocab_size} (fr); test {len(data['test'])} pairs")
    untrained = build_model(data, cfg, seed)
    t0 = time.perf_counter()
    model, hist = train_translation(data, cfg, seed=seed, progress=progress)
    train_seconds = time.perf_counter() - t0
    res = evaluate_bleu(model, data, untrained=untrained)
    metrics = {
        "bleu_greedy": res["bleu_greedy"], "bleu_beam": res["bleu_beam"], "beam_width": res["beam_width"],
        "length_penalty": 0.6, "bleu_copy_source": res["bleu_copy_source"],
        "bleu_untrained_greedy": res["bleu_untrained_greedy"],
        "final_train_loss": hist.train_loss[-1], "final_valid_cross_entropy": hist.val_loss[-1],
        "n_train_pairs": len(data["train"]), "n_test_pairs": len(data["test"]),
        "src_vocab": data["src_tok"].vocab_size, "tgt_vocab": data["tgt_tok"].vocab_size,
        "parameters": int(sum(p.size for _, p in model.named_parameters())),
        "train_seconds": train_seconds, "greedy_decode_seconds": res["greedy_seconds"],
        "beam_decode_seconds": res["beam_seconds"],
        "bleu": "sacrebleu corpus_bleu, 13a tokenisation, 1 reference, lowercase normalised text",
        "data": TATOEBA_ATTRIBUTION,
    }
    write_json(out / "config.json", {"mode": "quick" if quick else "full", "seed": seed, **cfg})
    write_json(out / "history.json", hist.to_dict())
    fig_dir = out / "figures"
    ax = plot_loss({"train": hist.train_loss, "val": hist.val_loss},
                   loss_label="Cross-entropy (nats/token; train: label-smoothed)",
                   title="English->French: training and validation loss")
    save_figure(ax, fig_dir / "loss.png")
    close_figure(ax)
    metrics["figures"] = ["loss.png"] + _cross_attention_figures(model, data, fig_dir)
    lines = [f"English -> French, {metrics['n_train_pairs']} training pairs; BLEU on {metrics['n_test_pairs']} test "
             f"pairs: greedy {metrics['bleu_greedy']:.2f}, beam({res['beam_width']}) {metrics['bleu_beam']:.2f}, "
             f"copy source {metrics['bleu_copy_source']:.2f}, untrained {metrics['bleu_untrained_greedy']:.2f}", ""]
    for i in range(12):
        en, fr = data["test"][i]
        lines += [f"EN:     {en}", f"REF:    {fr}", f"GREEDY: {res['hypotheses_greedy'][i]}",
                  f"BEAM:   {res['hypotheses_beam'][i]}", ""]
    lines += ["Data: " + TATOEBA_ATTRIBUTION]
    atomic_write_text(out / "samples.txt", "\n".join(lines) + "\n")
    model.save(out / "model", src_tokenizer=data["src_tok"], tgt_tokenizer=data["tgt_tok"], overwrite=True)
    metrics["total_seconds"] = time.perf_counter() - t_start
    write_json(out / "metrics.json", metrics)
    write_report(out)
    say(lines[0])
    for line in lines[2:12]:
        say(line)
    return metrics


def run(out, *, quick: bool = False, **kwargs) -> dict:
    """Entry point for :func:`glassformer.demos.run_demo` (``glassformer demo translate``)."""
    return run_translate(out, quick=quick, **kwargs)
