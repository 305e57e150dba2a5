"""Atomic writes: the target is replaced whole or not at all, and no temporary file is left."""

import json

import numpy as np
import pytest

from glassformer.errors import InputError
from glassformer.io import atomic_open, atomic_write_bytes, atomic_write_json, atomic_write_text


def test_atomic_writes_round_trip(tmp_path):
    atomic_write_text(tmp_path / "a.txt", "héllo\r\nworld")
    assert (tmp_path / "a.txt").read_bytes() == "héllo\r\nworld".encode()
    atomic_write_bytes(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    atomic_write_json(tmp_path / "c.json", {"x": np.float64(1.5), "n": np.int64(3), "l": [1, 2]})
    assert json.loads((tmp_path / "c.json").read_text()) == {"x": 1.5, "n": 3, "l": [1, 2]}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin", "c.json"]


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_atomic_open_failure_keeps_previous_file_and_leaves_no_temp(tmp_path, exc):
    target = tmp_path / "report.txt"
    target.write_text("old")
    with pytest.raises(exc):
        with atomic_open(target, "w") as fh:
            fh.write("new, half written")
            raise exc("killed")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.txt"]


def test_atomic_write_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        atomic_write_text(tmp_path / "nope" / "x.txt", "a")
    with pytest.raises(InputError, match="mode"):
        with atomic_open(tmp_path / "x", "a"):
            pass
    (tmp_path / "c.json").write_text("{}")
    with pytest.raises(InputError, match="serialis"):
        atomic_write_json(tmp_path / "c.json", {"f": object()})
    assert (tmp_path / "c.json").read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]
