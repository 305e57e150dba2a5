"""WordTokenizer and CharTokenizer: normalisation, vocabulary rules, batches, files, real data."""

from __future__ import annotations

import json

import numpy as np
import pytest

from glassformer.errors import InputError, ModelFileError, NotReadyError
from glassformer.text import (
    BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS, UNK_ID, CharTokenizer, WordTokenizer, load_pairs, load_shakespeare,
)

NNBSP, NBSP, THIN, ZWSP, SHY, RSQUO = "\u202f", "\u00a0", "\u2009", "\u200b", "\u00ad", "\u2019"


# ----- real data, read once per module ---------------------------------------------------------

@pytest.fixture(scope="module")
def sample(shared_data):
    """~2,300 real pairs: 2,000 drawn at random (seed 0) from the <=8-word pairs, plus every
    pair with a curly apostrophe, no-break or narrow no-break space (up to 100 each)."""
    pairs = load_pairs(shared_data / "text" / "fra-eng" / "fra.txt", max_words=8)
    idx = np.random.default_rng(0).choice(len(pairs), size=2000, replace=False)
    chosen = [pairs[i] for i in sorted(idx)]
    for ch in (RSQUO, NBSP, NNBSP):
        chosen += [p for p in pairs if ch in p[0] + p[1]][:100]
    return chosen


@pytest.fixture(scope="module")
def shakespeare(shared_data):
    return load_shakespeare(shared_data / "text" / "tinyshakespeare" / "input.txt")


# ----- special ids ------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [WordTokenizer, CharTokenizer])
def test_special_ids_are_fixed(cls):
    assert (cls.PAD_ID, cls.BOS_ID, cls.EOS_ID, cls.UNK_ID) == (0, 1, 2, 3) == (PAD_ID, BOS_ID, EOS_ID, UNK_ID)
    assert (cls.PAD, cls.BOS, cls.EOS, cls.UNK) == ("<pad>", "<bos>", "<eos>", "<unk>") == SPECIAL_TOKENS
    tok = cls().fit(["zebra apple zebra"])
    assert [tok.id_to_token(i) for i in range(4)] == ["<pad>", "<bos>", "<eos>", "<unk>"]
    assert [tok.token_to_id(t) for t in SPECIAL_TOKENS] == [0, 1, 2, 3]


# ----- normalisation on hand-written strings ----------------------------------------------------

@pytest.mark.parametrize("text, tokens, plain, french", [
    (f"Cours{NNBSP}!", ["cours", "!"], "cours!", "cours !"),
    (f"Il est 8{NBSP}h{NBSP}30.", ["il", "est", "8", "h", "30", "."], "il est 8 h 30.", "il est 8 h 30."),
    (f"J{RSQUO}espère qu\u2018il viendra.", ["j'", "espère", "qu'", "il", "viendra", "."],
     "j'espère qu'il viendra.", "j'espère qu'il viendra."),
    ("Qu'est-ce que c'est ?", ["qu'", "est", "-ce", "que", "c'", "est", "?"],
     "qu'est-ce que c'est?", "qu'est-ce que c'est ?"),
    (f"Va-t{RSQUO}en{THIN}!", ["va", "-t'", "en", "!"], "va-t'en!", "va-t'en !"),
    ("It's a boys' club.", ["it'", "s", "a", "boys", "'", "club", "."], "it's a boys' club.", "it's a boys' club."),
    (f"Dis{NBSP}: «{NBSP}s'il te plaît{NBSP}».", ["dis", ":", "«", "s'", "il", "te", "plaît", "»", "."],
     "dis: «s'il te plaît».", "dis : « s'il te plaît »."),
    ("It only costs $10.00!", ["it", "only", "costs", "$", "10.00", "!"], "it only costs $10.00!",
     "it only costs $10.00 !"),
    ('"Trust me," he said.', ['"', "trust", "me", ",", '"', "he", "said", "."], '"trust me," he said.',
     '"trust me," he said.'),
    ("If you can't lick 'em, join 'em.", ["if", "you", "can'", "t", "lick", "'em", ",", "join", "'em", "."],
     "if you can't lick 'em, join 'em.", "if you can't lick 'em, join 'em."),
    (f"Ils dansaient sur {ZWSP}{ZWSP}la musique.", ["ils", "dansaient", "sur", "la", "musique", "."],
     "ils dansaient sur la musique.", "ils dansaient sur la musique."),
    (f"dishes in the sink{SHY}.", ["dishes", "in", "the", "sink", "."], "dishes in the sink.", "dishes in the sink."),
    ("  Wait...\tWHAT?\n", ["wait", ".", ".", ".", "what", "?"], "wait... what?", "wait... what ?"),
])
def test_normalize_hand_written(text, tokens, plain, french):
    tok = WordTokenizer()
    assert tok.tokenize(text) == tokens
    assert tok.normalize(text) == plain
    assert WordTokenizer(french_spacing=True).normalize(text) == french
    assert tok.normalize(plain) == plain  # idempotent
    fitted = WordTokenizer().fit([text])
    assert fitted.decode(fitted.encode(text)) == plain


def test_nfc_and_case():
    tok = WordTokenizer()
    assert tok.tokenize("E\u0301te\u0301") == tok.tokenize("Été") == ["été"]
    assert WordTokenizer(lowercase=False).tokenize(f"Tom{NNBSP}!") == ["Tom", "!"]
    assert tok.tokenize(f"a{NBSP}b{NNBSP}c{THIN}d\u3000e") == ["a", "b", "c", "d", "e"]


# ----- vocabulary rules -------------------------------------------------------------------------

TEXTS = ["z y y", "x z y", "w"]  # counts: y 3, z 2, w 1, x 1 (frequency order differs from alphabetical)


def test_vocab_order_frequency_then_alphabetical():
    tok = WordTokenizer().fit(TEXTS)
    assert tok.tokens == SPECIAL_TOKENS + ("y", "z", "w", "x")
    assert tok.vocab_size == len(tok) == 8
    assert tok.encode("x w z y") == [7, 6, 5, 4]
    assert tok.token_to_id("zzz") == UNK_ID


@pytest.mark.parametrize("kwargs, kept", [
    ({"max_vocab": 6}, ("y", "z")),           # max_vocab counts the 4 specials
    ({"max_vocab": 7}, ("y", "z", "w")),
    ({"min_freq": 2}, ("y", "z")),
    ({"min_freq": 3}, ("y",)),
    ({"max_vocab": 5, "min_freq": 2}, ("y",)),
    ({"max_vocab": 4}, ()),
    ({"max_vocab": 100, "min_freq": 1}, ("y", "z", "w", "x")),
])
def test_max_vocab_and_min_freq(kwargs, kept):
    tok = WordTokenizer(**kwargs).fit(TEXTS)
    assert tok.tokens == SPECIAL_TOKENS + kept
    words = ["w", "x", "y", "z"]
    assert tok.encode("w x y z") == [4 + kept.index(w) if w in kept else UNK_ID for w in words]
    assert tok.decode(tok.encode("w x y z")) == " ".join(w if w in kept else "<unk>" for w in words)


# ----- batches ----------------------------------------------------------------------------------

def test_encode_batch_pads_with_pad_id():
    tok = WordTokenizer().fit(TEXTS)  # y=4 z=5 w=6 x=7
    ids, lengths = tok.encode_batch(["y z", "w", ""], add_bos=True, add_eos=True)
    assert ids.dtype == np.int64 and lengths.dtype == np.int64
    np.testing.assert_array_equal(ids, [[1, 4, 5, 2], [1, 6, 2, 0], [1, 2, 0, 0]])
    np.testing.assert_array_equal(lengths, [4, 3, 2])
    ids, lengths = tok.encode_batch(["y z w x", "w"], add_eos=True, max_len=3)  # EOS kept when truncating
    np.testing.assert_array_equal(ids, [[4, 5, 2], [6, 2, 0]])
    np.testing.assert_array_equal(lengths, [3, 2])
    ids, lengths = tok.encode_batch(["y z", "zebra"])
    np.testing.assert_array_equal(ids, [[4, 5], [UNK_ID, PAD_ID]])
    rows, lengths = tok.encode_batch(["y z", "w"], add_bos=True, pad=False)
    assert [r.tolist() for r in rows] == [[1, 4, 5], [1, 6]] and lengths.tolist() == [3, 2]


def test_decode_stops_at_eos_and_drops_pad_bos():
    tok = WordTokenizer().fit(TEXTS)
    assert tok.decode([1, 4, 5, 2, 6, 0]) == "y z"
    assert tok.decode(np.array([4, 0, 3, 5])) == "y <unk> z"
    assert tok.decode([1, 4, 5, 2, 6, 0], skip_special=False) == "<bos> y z <eos> w <pad>"
    assert tok.decode([]) == ""
    batch = np.array([[1, 4, 2, 0], [1, 6, 7, 2], [2, 4, 4, 4]])
    assert tok.decode_batch(batch) == ["y", "w x", ""]
    assert tok.decode_batch([[4], [5, 2, 6]]) == ["y", "z"]


# ----- errors -----------------------------------------------------------------------------------

def test_errors_are_clear():
    with pytest.raises(NotReadyError, match="fit"):
        WordTokenizer().encode("a")
    with pytest.raises(NotReadyError):
        CharTokenizer().decode([1])
    tok = WordTokenizer().fit(TEXTS)
    with pytest.raises(InputError, match="must be a str, got int"):
        tok.encode(5)
    with pytest.raises(InputError, match="single str"):
        WordTokenizer().fit("a b c")
    with pytest.raises(InputError, match="single str"):
        tok.encode_batch("a b")
    with pytest.raises(InputError, match=r"texts\[1\]"):
        tok.encode_batch(["a", None])
    with pytest.raises(InputError, match="empty"):
        tok.encode_batch([])
    with pytest.raises(InputError, match="id 99 at position 1"):
        tok.decode([4, 99])
    with pytest.raises(InputError, match="integers"):
        tok.decode([4.0])
    with pytest.raises(InputError, match="1-D"):
        tok.decode([[4]])
    with pytest.raises(InputError, match="2-D"):
        tok.decode_batch(np.array([4, 5]))
    with pytest.raises(InputError, match="max_len"):
        tok.encode_batch(["y"], add_bos=True, add_eos=True, max_len=1)
    with pytest.raises(InputError, match="max_vocab"):
        WordTokenizer(max_vocab=3)
    with pytest.raises(InputError, match="min_freq"):
        WordTokenizer(min_freq=0)
    with pytest.raises(InputError, match="outside"):
        tok.id_to_token(8)


# ----- files ------------------------------------------------------------------------------------

def test_save_load_round_trip(tmp_path):
    tok = WordTokenizer(max_vocab=7, min_freq=1, lowercase=False, french_spacing=True).fit(["É b b", "c «d» c"])
    path = tok.save(tmp_path / "sub" / "tok.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["kind"] == "word" and doc["tokens"][:4] == list(SPECIAL_TOKENS)
    again = WordTokenizer.load(path)
    assert again.tokens == tok.tokens
    assert (again.max_vocab, again.min_freq, again.lowercase, again.french_spacing) == (7, 1, False, True)
    assert again.encode("É b c «") == tok.encode("É b c «")
    tok.fit(["x"]).save(path)  # overwrite in place, no temp file left behind
    assert WordTokenizer.load(path).tokens == SPECIAL_TOKENS + ("x",)
    assert sorted(p.name for p in path.parent.iterdir()) == ["tok.json"]

    chars = CharTokenizer().fit("hello\n")
    cpath = chars.save(tmp_path / "chars.json")
    assert CharTokenizer.load(cpath).tokens == chars.tokens == SPECIAL_TOKENS + ("\n", "e", "h", "l", "o")
    with pytest.raises(ModelFileError, match="CharTokenizer.load"):
        WordTokenizer.load(cpath)


def test_load_rejects_bad_files(tmp_path):
    with pytest.raises(ModelFileError, match="not found"):
        WordTokenizer.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelFileError, match="not a JSON"):
        WordTokenizer.load(bad)
    bad.write_text(json.dumps({"format": "glassformer-tokenizer", "format_version": 1, "kind": "word",
                               "config": {}, "tokens": ["<unk>", "<pad>", "<bos>", "<eos>", "a"]}), encoding="utf-8")
    with pytest.raises(ModelFileError, match="starting with"):
        WordTokenizer.load(bad)
    bad.write_text(json.dumps({"format": "glassformer-tokenizer", "format_version": 99}), encoding="utf-8")
    with pytest.raises(ModelFileError, match="format_version 99"):
        WordTokenizer.load(bad)


# ----- real data --------------------------------------------------------------------------------

def test_sample_has_the_french_typography(sample):
    text = "".join(en + fr for en, fr in sample)
    assert len(sample) > 2100
    for ch in (RSQUO, NBSP, NNBSP):
        assert text.count(ch) >= 50


@pytest.mark.parametrize("french_spacing", [False, True])
def test_round_trip_on_real_pairs(sample, french_spacing):
    for side in (0, 1):
        texts = [p[side] for p in sample]
        tok = WordTokenizer(french_spacing=french_spacing).fit(texts)
        assert tok.vocab_size > 1000
        for text in texts:
            ids = tok.encode(text, add_bos=True, add_eos=True)
            assert ids[0] == BOS_ID and ids[-1] == EOS_ID and UNK_ID not in ids
            norm = tok.normalize(text)
            assert tok.decode(ids) == norm
            assert tok.normalize(norm) == norm
            assert not set(norm) & {NBSP, NNBSP, THIN, RSQUO}
        ids, lengths = tok.encode_batch(texts[:64], add_bos=True, add_eos=True)
        assert tok.decode_batch(ids) == [tok.normalize(t) for t in texts[:64]]
        assert ids.shape == (64, lengths.max()) and (ids[np.arange(ids.shape[1]) >= lengths[:, None]] == 0).all()


def test_unknown_real_words_map_to_unk(sample):
    french = [p[1] for p in sample]
    tok = WordTokenizer().fit(french[:1000])
    known = set(tok.tokens)
    n_unk = 0
    for text in french[1000:]:
        toks = tok.tokenize(text)
        ids = tok.encode(text)
        assert ids == [tok.token_to_id(t) if t in known else UNK_ID for t in toks]
        assert tok.decode(ids) == tok.detokenize([t if t in known else "<unk>" for t in toks])
        n_unk += sum(t not in known for t in toks)
    assert n_unk > 100


def test_char_tokenizer_on_shakespeare(shakespeare):
    tok = CharTokenizer().fit(shakespeare)
    assert tok.vocab_size == 4 + 65
    assert tok.tokens[4:6] == ("\n", " ") and tok.tokens[-1] == "z"
    train, valid = shakespeare[:1_000_000], shakespeare[1_000_000:1_020_000]
    part = CharTokenizer().fit(train)
    ids = part.encode(valid)
    assert len(ids) == len(valid) and min(ids) >= 4
    assert part.decode(ids) == valid
    assert part.encode("é\n") == [UNK_ID, part.token_to_id("\n")]
    ids, lengths = tok.encode_batch([valid[:50], valid[50:80]], add_bos=True)
    assert ids.shape == (2, 51) and tok.decode_batch(ids) == [valid[:50], valid[50:80]]
