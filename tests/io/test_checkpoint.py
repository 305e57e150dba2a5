"""Training checkpoints: exact resume, and tampered or confused files refused."""

import json

import numpy as np
import pytest

from glassformer.errors import InputError, ModelFileError
from glassformer.io import load_checkpoint, load_model, save_checkpoint
from glassformer.nn import Linear
from glassformer.train.optim import Adam


def test_checkpoint_round_trip_resumes_training_exactly(tmp_path):
    rng_grads = np.random.default_rng(5)
    grads = [rng_grads.standard_normal((2, 3)) for _ in range(6)]

    def make():
        lin = Linear(3, 2, rng=0)
        return lin, Adam(lin.named_parameters(), lr=0.01)

    def run(lin, opt, gs):
        for g in gs:
            lin.weight.grad[...] = g
            lin.bias.grad[...] = g[:, 0]
            opt.step()

    ref, ref_opt = make()
    run(ref, ref_opt, grads)

    lin, opt = make()
    run(lin, opt, grads[:3])
    rng = np.random.default_rng(42)
    rng.random(3)
    save_checkpoint(tmp_path / "ckpt", model_state=lin.state_dict(), optimizer_state=opt.state_dict(),
                    trainer_state={"epoch": 3, "rng": rng.bit_generator.state,
                                   "history": {"train_loss": [0.5, 0.25, float("nan")]}},
                    config={"lr": 0.01})
    expected_draw = rng.random()

    ck = load_checkpoint(tmp_path / "ckpt")
    lin2, opt2 = make()
    lin2.load_state_dict(ck.model_state)
    opt2.load_state_dict(ck.optimizer_state)
    run(lin2, opt2, grads[3:])
    np.testing.assert_array_equal(lin2.weight.data, ref.weight.data)
    np.testing.assert_array_equal(lin2.bias.data, ref.bias.data)
    rng2 = np.random.default_rng()
    rng2.bit_generator.state = ck.trainer_state["rng"]
    assert rng2.random() == expected_draw
    assert ck.trainer_state["epoch"] == 3 and np.isnan(ck.trainer_state["history"]["train_loss"][2])
    assert ck.config == {"lr": 0.01}
    with np.load(tmp_path / "ckpt" / "checkpoint.npz") as z:
        assert "model/weight" in z.files and "optim/arrays/weight/exp_avg" in z.files


def test_checkpoint_tampering_and_confusion_rejected(tmp_path):
    lin = Linear(2, 2, rng=0)
    opt = Adam(lin.named_parameters())
    save_checkpoint(tmp_path, model_state=lin.state_dict(), optimizer_state=opt.state_dict(),
                    trainer_state={"epoch": 1}, config={})
    with pytest.raises(ModelFileError, match="foreign file: format is 'glassformer-checkpoint'"):
        load_model(tmp_path / "checkpoint.npz")
    meta = json.loads((tmp_path / "checkpoint.json").read_text())
    meta["state"]["trainer"]["epoch"] = 7
    (tmp_path / "checkpoint.json").write_text(json.dumps(meta))
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        load_checkpoint(tmp_path)
    with pytest.raises(InputError, match="must be a string"):
        save_checkpoint(tmp_path / "x", model_state={}, optimizer_state={}, trainer_state={1: 2}, config={})
