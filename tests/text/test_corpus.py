"""Corpus loaders and splits: the real files' published counts, hand-made files, determinism."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from glassformer.errors import DataFileError, InputError
from glassformer.text import (
    SHAKESPEARE_ATTRIBUTION, TATOEBA_ATTRIBUTION, data_root, load_pairs, load_shakespeare, split_pairs, split_text,
)
from glassformer.text.corpus import _source_key


@pytest.fixture(scope="module")
def fra_path(shared_data) -> Path:
    return shared_data / "text" / "fra-eng" / "fra.txt"


@pytest.fixture(scope="module")
def pairs8(fra_path):
    return load_pairs(fra_path, max_words=8)


# ----- the real pairs (counts from ../shared/data/text/README.md) -------------------------------

def test_real_pairs_counts_and_format(fra_path, pairs8):
    assert len(pairs8) == 127_422
    assert pairs8[:3] == [("Go.", "Va !"), ("Hi.", "Salut !"), ("Run!", "Cours\u202f!")]
    assert all(len(en.split()) <= 8 and len(fr.split()) <= 8 for en, fr in pairs8)
    assert not any("\t" in en + fr for en, fr in pairs8)
    assert len(load_pairs(fra_path, max_words=5)) == 52_041
    assert len(load_pairs(fra_path, max_words=None)) == 167_130
    assert load_pairs(fra_path, max_pairs=4) == pairs8[:4]


def test_real_split_is_deterministic_disjoint_and_grouped(pairs8):
    a = split_pairs(pairs8, n_test=1000, n_valid=1000, seed=0)
    b = split_pairs(pairs8, n_test=1000, n_valid=1000, seed=0)
    c = split_pairs(pairs8, n_test=1000, n_valid=1000, seed=1)
    assert a == b and a.test != c.test
    assert (len(a.train), len(a.valid), len(a.test)) == (125_422, 1000, 1000)
    assert Counter(a.train + a.valid + a.test) == Counter(pairs8)  # every pair exactly once
    keys = [{_source_key(en) for en, _ in part} for part in a]
    assert not (keys[0] & keys[1] or keys[0] & keys[2] or keys[1] & keys[2])
    # not the shortest pairs (the file is sorted by length): the test set looks like the whole
    mean_words = np.mean([len(en.split()) for en, _ in a.test])
    assert abs(mean_words - np.mean([len(en.split()) for en, _ in pairs8])) < 0.3


# ----- hand-made files --------------------------------------------------------------------------

def test_load_pairs_hand_made_file(tmp_path):
    f = tmp_path / "fra.txt"
    f.write_bytes("Go.\tVa !\r\n\nHi there you.\tSalut\u202f!\tCC-BY 2.0 (France) Attribution: tatoeba.org #1\n"
                  "One two three four.\tUn deux trois quatre.\n".encode("utf-8"))
    assert load_pairs(f) == [("Go.", "Va !"), ("Hi there you.", "Salut\u202f!"),
                             ("One two three four.", "Un deux trois quatre.")]
    assert load_pairs(f, max_words=3) == [("Go.", "Va !"), ("Hi there you.", "Salut\u202f!")]
    assert load_pairs(str(f), max_words=2) == [("Go.", "Va !")]  # "Va !" counts 2 words
    with pytest.raises(DataFileError, match="no sentence pairs"):
        load_pairs(f, max_words=1)
    f.write_text("Go.\tVa !\nno tab here\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=r"fra\.txt, line 2: .*no TAB"):
        load_pairs(f)
    f.write_text("Go.\t \n", encoding="utf-8")
    with pytest.raises(DataFileError, match="line 1: empty French"):
        load_pairs(f)
    f.write_bytes(b"Go.\tVa \xe9\n")
    with pytest.raises(DataFileError, match="not UTF-8"):
        load_pairs(f)
    with pytest.raises(InputError, match="max_words"):
        load_pairs(f, max_words=0)


def test_missing_files_name_the_path_and_the_fix(tmp_path, monkeypatch):
    missing = tmp_path / "nowhere" / "fra.txt"
    with pytest.raises(DataFileError, match="path=") as err:
        load_pairs(missing)
    assert str(missing) in str(err.value)
    monkeypatch.setenv("GLASSFORMER_DATA", str(tmp_path))
    assert data_root() == tmp_path
    with pytest.raises(DataFileError, match="GLASSFORMER_DATA") as err:
        load_shakespeare()
    assert str(tmp_path / "text" / "tinyshakespeare" / "input.txt") in str(err.value)
    with pytest.raises(DataFileError, match="fra-eng"):
        load_pairs()
    (tmp_path / "text" / "fra-eng").mkdir(parents=True)
    (tmp_path / "text" / "fra-eng" / "fra.txt").write_text("Hi.\tSalut !\n", encoding="utf-8")
    assert load_pairs() == [("Hi.", "Salut !")]


def test_default_data_root_is_next_to_the_repo(monkeypatch):
    monkeypatch.delenv("GLASSFORMER_DATA", raising=False)
    repo = Path(__file__).resolve().parents[2]
    assert data_root() == (repo / ".." / "shared" / "data").resolve()


# ----- splits on hand-made pairs ----------------------------------------------------------------

def test_split_groups_translations_of_one_sentence():
    pairs = [(f"s{i}", f"f{i}.{j}") for i in range(30) for j in range(1 + i % 3)]  # groups of 1-3 pairs
    split = split_pairs(pairs, n_test=5, n_valid=4, seed=3)
    assert (len(split.test), len(split.valid), len(split.train)) == (5, 4, len(pairs) - 9)
    sources = [{en for en, _ in part} for part in split]
    assert not (sources[0] & sources[1] or sources[0] & sources[2] or sources[1] & sources[2])
    assert split == split_pairs(list(pairs), n_test=5, n_valid=4, seed=3)


def test_split_without_grouping_is_a_seeded_permutation():
    pairs = [(f"e{i}", f"f{i}") for i in range(20)]
    split = split_pairs(pairs, n_test=3, n_valid=2, seed=7, group_by_source=False)
    order = np.random.default_rng(7).permutation(20)
    assert split.test == [pairs[i] for i in order[:3]]
    assert split.valid == [pairs[i] for i in order[3:5]]
    assert split.train == [pairs[i] for i in order[5:]]


def test_split_errors():
    pairs = [("a", "b"), ("c", "d")]
    with pytest.raises(InputError, match="non-empty train"):
        split_pairs(pairs, n_test=1, n_valid=1)
    with pytest.raises(InputError, match="n_test"):
        split_pairs(pairs, n_test=-1)
    with pytest.raises(InputError, match="could not fill"):
        split_pairs([("a", "1"), ("a", "2"), ("a", "3")], n_test=1, n_valid=0)
    with pytest.raises(InputError, match="str tuples"):
        split_pairs(["ab", "cd"], n_test=1, n_valid=0)


# ----- tiny Shakespeare -------------------------------------------------------------------------

def test_shakespeare(shared_data, tmp_path):
    text = load_shakespeare(shared_data / "text" / "tinyshakespeare" / "input.txt")
    assert len(text) == 1_115_394 and len(set(text)) == 65
    assert text.startswith("First Citizen:\n")
    train, valid = split_text(text)
    assert train + valid == text and len(valid) == round(0.1 * len(text))
    empty = tmp_path / "input.txt"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(DataFileError, match="empty"):
        load_shakespeare(empty)
    with pytest.raises(InputError, match="valid_fraction"):
        split_text("abc", valid_fraction=1.0)


def test_attributions_give_the_required_credit():
    for needed in ("tatoeba.org", "www.manythings.org/anki", "CC BY 2.0", "creativecommons.org/licenses/by/2.0"):
        assert needed in TATOEBA_ATTRIBUTION
    assert "karpathy/char-rnn" in SHAKESPEARE_ATTRIBUTION and "public domain" in SHAKESPEARE_ATTRIBUTION
