"""Model files: round trip and every kind of bad file (generated at run time in ``tmp_path``)."""

import json
import pickle

import numpy as np
import pytest

import glassformer.io as gio
import glassformer.io.archive as archive
from glassformer.errors import InputError, ModelFileError
from glassformer.io import load_model, load_model_file, save_model
from glassformer.nn import Linear
from glassformer.train.optim import Adam


def _state():
    return {"linear1.weight": np.arange(12.0).reshape(3, 4) / 7, "linear1.bias": np.array([0.5, -1.0, 2.0]),
            "norm.weight": np.ones(4, dtype=np.float32)}


CONFIG = {"d_model": 4, "num_heads": 1, "dropout": 0.1, "inputs": ["PHIF", "VSH"], "norm_first": False}


@pytest.fixture
def saved(tmp_path):
    d = tmp_path / "run"
    save_model(d, _state(), CONFIG, kind="SequenceRegressor", extra_arrays={"scaler_min": np.array([0.1, 2.0])})
    return d



def test_model_round_trip(saved):
    state, config, kind = load_model(saved)
    assert kind == "SequenceRegressor" and config == CONFIG
    assert set(state) == set(_state())
    for k, v in _state().items():
        np.testing.assert_array_equal(state[k], v)
        assert state[k].dtype == v.dtype
    full = load_model_file(saved / "model.json")
    np.testing.assert_array_equal(full.extra_arrays["scaler_min"], [0.1, 2.0])
    assert full.format_version == 1
    meta = json.loads((saved / "model.json").read_text())
    assert meta["format"] == "glassformer-model" and meta["format_version"] == 1
    assert meta["arrays"]["linear1.weight"] == {"shape": [3, 4], "dtype": "<f8"}
    assert len(meta["checksum"]["arrays"]) == 64
    with np.load(saved / "model.npz", allow_pickle=False) as z:  # a plain npz, readable without glassformer
        np.testing.assert_array_equal(z["linear1.bias"], [0.5, -1.0, 2.0])
    assert sorted(p.name for p in saved.iterdir()) == ["model.json", "model.npz"]


def test_model_from_module_and_file_stem(tmp_path):
    lin = Linear(3, 2, rng=0)
    path = save_model(tmp_path / "lin.npz", lin.state_dict(), {"in": 3, "out": 2}, kind="Linear")
    assert path == tmp_path / "lin.npz" and (tmp_path / "lin.json").is_file()
    other = Linear(3, 2, rng=1)
    other.load_state_dict(load_model(tmp_path / "lin.npz")[0])
    np.testing.assert_array_equal(other.weight.data, lin.weight.data)
    first = (tmp_path / "lin.npz").read_bytes()
    save_model(tmp_path / "lin", lin.state_dict(), {"in": 3, "out": 2}, kind="Linear")
    assert (tmp_path / "lin" / "model.npz").read_bytes() == first  # deterministic bytes


def test_refuses_to_overwrite_unless_asked(saved):
    before = (saved / "model.npz").read_bytes()
    with pytest.raises(ModelFileError, match="already exists.*overwrite"):
        save_model(saved, {"w": np.zeros(2)}, {}, kind="X")
    assert (saved / "model.npz").read_bytes() == before
    save_model(saved, {"w": np.zeros(2)}, {}, kind="X", overwrite=True)
    assert load_model(saved)[2] == "X"


def test_save_rejects_unsaveable_input(tmp_path):
    with pytest.raises(InputError, match="dtype object"):
        save_model(tmp_path / "a", {"w": np.array([object()])}, {}, kind="X")
    with pytest.raises(InputError, match="JSON"):
        save_model(tmp_path / "b", {"w": np.zeros(1)}, {"f": lambda: 0}, kind="X")
    with pytest.raises(InputError, match="kind"):
        save_model(tmp_path / "c", {"w": np.zeros(1)}, {}, kind="")
    assert not any((tmp_path / n).exists() for n in "abc")  # validated before anything is created


def test_killing_a_save_halfway_keeps_the_previous_model(saved, monkeypatch):
    before = {p.name: p.read_bytes() for p in saved.iterdir()}

    def dies_midway(fh, arrays):
        fh.write(b"PK\x03\x04 half an archive")
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(archive, "_write_npz", dies_midway)
    with pytest.raises(KeyboardInterrupt):
        save_model(saved, {"w": np.zeros(5)}, {"new": True}, kind="New", overwrite=True)
    assert {p.name: p.read_bytes() for p in saved.iterdir()} == before  # intact, no temp litter
    monkeypatch.undo()
    assert load_model(saved)[2] == "SequenceRegressor"


def test_truncated_and_empty_npz_rejected(saved):
    npz = saved / "model.npz"
    data = npz.read_bytes()
    npz.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFileError, match=r"model\.npz: truncated or corrupted"):
        load_model(saved)
    npz.write_bytes(b"")
    with pytest.raises(ModelFileError, match="empty"):
        load_model(saved)


def test_bit_flip_in_array_data_rejected(saved):
    npz = saved / "model.npz"
    data = bytearray(npz.read_bytes())
    at = bytes(data).find(_state()["linear1.weight"].tobytes()) + 40
    assert at > 40
    data[at] ^= 0x01
    npz.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match=r"model\.npz: (truncated or corrupted|checksum mismatch)"):
        load_model(saved)


def test_checksum_mismatch_when_arrays_swapped_or_json_edited(saved, tmp_path):
    state = _state()
    state["linear1.bias"] = state["linear1.bias"] + 1e-12  # same names, shapes, dtypes; other numbers
    gio.save_model(tmp_path / "other", state, CONFIG, kind="SequenceRegressor",
                   extra_arrays={"scaler_min": np.array([0.1, 2.0])})
    original_npz = (saved / "model.npz").read_bytes()
    (saved / "model.npz").write_bytes((tmp_path / "other" / "model.npz").read_bytes())
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        load_model(saved)
    (saved / "model.npz").write_bytes(original_npz)
    meta = json.loads((saved / "model.json").read_text())
    meta["config"]["d_model"] = 8
    (saved / "model.json").write_text(json.dumps(meta))
    with pytest.raises(ModelFileError, match=r"model\.json: checksum mismatch"):
        load_model(saved)


def test_foreign_files_rejected(saved, tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    np.savez(foreign / "model.npz", weights=np.ones(3))
    with pytest.raises(ModelFileError, match=r"model\.json: missing"):
        load_model(foreign)
    (foreign / "model.json").write_text(json.dumps({"name": "someone else's model", "layers": 3}))
    with pytest.raises(ModelFileError, match="no 'format' field"):
        load_model(foreign)
    (foreign / "model.json").write_text(json.dumps({"format": "keras", "format_version": 1}))
    with pytest.raises(ModelFileError, match="foreign file: format is 'keras'"):
        load_model(foreign)
    (foreign / "model.json").write_text((saved / "model.json").read_text())
    with pytest.raises(ModelFileError, match="do not belong together"):
        load_model(foreign)
    (foreign / "model.json").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ModelFileError, match="not UTF-8"):
        load_model(foreign)
    (saved / "model.json").write_text((saved / "model.json").read_text()[:50])
    with pytest.raises(ModelFileError, match="not valid JSON"):
        load_model(saved)
    with pytest.raises(ModelFileError, match="no model found"):
        load_model(tmp_path / "nothing here")


@pytest.mark.parametrize("content,match", [
    (b"\x89PNG\r\n\x1a\n" + bytes(range(64)), "PNG image"),
    (b"DEPTH,PHIF,KLOGH\n3351.6,0.21,1.3\n", "text file"),
    (b"\x93NUMPY\x01\x00v\x00{'descr'", "single .npy"),
    (b"\x00\x01\x02\x03\xfe\xfd\xfc\xfb", "unknown binary"),
])
def test_file_renamed_from_another_format_rejected(saved, content, match):
    (saved / "model.npz").write_bytes(content)
    with pytest.raises(ModelFileError, match=match):
        load_model(saved)


def test_wrong_format_version_rejected(saved):
    meta = json.loads((saved / "model.json").read_text())
    for version, match in [(2, "format_version 2 is newer"), (0, "invalid format_version"),
                           ("1", "invalid format_version")]:
        meta["format_version"] = version
        (saved / "model.json").write_text(json.dumps(meta))
        with pytest.raises(ModelFileError, match=match):
            load_model(saved)


class _Sentinel:
    """Unpickling this object would create the file ``path``: proof that something was unpickled."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_pickle_disguised_as_model_is_never_unpickled(saved, tmp_path):
    marker = tmp_path / "unpickled.flag"
    # Sanity: the sentinel really has a side effect when unpickled.
    pickle.loads(pickle.dumps(_Sentinel(tmp_path / "control.flag"))).close()
    assert (tmp_path / "control.flag").exists()

    (saved / "model.npz").write_bytes(pickle.dumps(_Sentinel(marker), protocol=4))
    with pytest.raises(ModelFileError, match="pickle"):
        load_model(saved)
    assert not marker.exists()


def test_object_array_inside_npz_is_never_unpickled(saved, tmp_path):
    marker = tmp_path / "unpickled.flag"
    meta = json.loads((saved / "model.json").read_text())
    evil = {name: np.zeros(spec["shape"]) for name, spec in meta["arrays"].items()}
    evil["linear1.bias"] = np.array([_Sentinel(marker)] * 3, dtype=object)
    np.savez(saved / "model.npz", **evil)  # np.savez pickles object arrays; we must never read them
    with pytest.raises(ModelFileError, match="never unpickles"):
        load_model(saved)
    assert not marker.exists()
