"""A well model's transformer fine-tuned in PyTorch and put back: prediction, saving and loading work."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from glassformer import SequenceRegressor, WellModel  # noqa: E402
from glassformer.data import synthetic_wells  # noqa: E402
from glassformer.interop import from_torch, to_torch  # noqa: E402


def test_well_model_round_trip_at_real_depths(tmp_path):
    wells = synthetic_wells(n_wells=3, n_samples=120)
    wm = WellModel(["PHI", "VSH"], "PERM", window=12, positions="depth",
                   model=SequenceRegressor(d_model=8, epochs=2, positional="rotary", norm_first=True)).fit(wells[:2])
    before = wm.predict_log(wells[2])

    module = to_torch(wm.model_)
    x, y, depth, _ = (np.concatenate(a) for a in zip(*[w for g in wells[:2] for w in
                                                      wm.windows(g, stride=6, with_target=True, pad_last=False)]))
    opt = torch.optim.AdamW(module.parameters(), lr=1e-2)
    ok = ~np.isnan(y)
    for _ in range(5):
        opt.zero_grad()
        pred = module(torch.from_numpy(x), torch.from_numpy(depth))   # (n, T, 1), positions: depth in m
        loss = ((pred - torch.from_numpy(y))[torch.from_numpy(ok)] ** 2).mean()
        loss.backward()
        opt.step()
    wm.model_ = from_torch(module)

    (xb, _, pb, _), = wm.windows(wells[2], stride=6, with_target=False, pad_last=True)
    module.eval()
    with torch.no_grad():
        theirs = module(torch.from_numpy(xb), torch.from_numpy(pb)).numpy()
    assert np.max(np.abs(wm.model_.predict(xb, pb) - theirs)) <= 1e-10
    after = wm.predict_log(wells[2])
    assert np.nanmax(np.abs(after - before)) > 1e-4               # the PyTorch steps changed the log ...
    np.testing.assert_array_equal(np.isnan(after), np.isnan(before))
    wm.save(tmp_path / "tuned")
    again = WellModel.load(tmp_path / "tuned")                    # ... and it is saved like any well model
    np.testing.assert_array_equal(again.predict_log(wells[2]), after)
