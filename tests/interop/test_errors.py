"""What cannot be converted is refused with a one-line error naming it; torch stays optional."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from glassformer import SequenceRegressor
from glassformer.errors import InputError, MissingDependencyError, NotReadyError, StateDictError
from glassformer.interop import from_torch, to_torch
from glassformer.nn import PositionalEncoding
from glassformer.wells import WellModel
from glassformer.wells.member_mean import MemberMean

REPO = Path(__file__).resolve().parents[2]


def run_python(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=300)


def test_importing_glassformer_never_imports_torch():
    code = ("import sys; import glassformer, glassformer.interop, glassformer.models, glassformer.wells; "
            "from glassformer import SequenceRegressor; SequenceRegressor(); "
            "print('torch' in sys.modules)")
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_without_torch_the_error_names_pip_install():
    code = ("import importlib.abc, sys\n"
            "class NoTorch(importlib.abc.MetaPathFinder):\n"     # as if torch were not installed
            "    def find_spec(self, name, path, target=None):\n"
            "        if name.split('.')[0] == 'torch':\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "sys.meta_path.insert(0, NoTorch())\n"
            "from glassformer import SequenceRegressor\n"
            "from glassformer.interop import from_torch, to_torch\n"
            "m = SequenceRegressor(d_model=4, num_heads=1, epochs=1); m.build_network(1)\n"
            "for call in (lambda: to_torch(m), lambda: from_torch({})):\n"
            "    try:\n"
            "        call()\n"
            "    except ImportError as exc:\n"
            "        print(type(exc).__name__, exc)\n")
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("MissingDependencyError to_torch needs PyTorch")
    assert lines[1].startswith("MissingDependencyError from_torch needs PyTorch")
    assert all("pip install torch" in line for line in lines)
    assert issubclass(MissingDependencyError, ImportError)


torch = pytest.importorskip("torch")


def test_unfitted_model_is_refused():
    with pytest.raises(NotReadyError, match=r"to_torch: the SequenceRegressor has no network yet; call fit"):
        to_torch(SequenceRegressor())


def test_other_objects_are_refused():
    with pytest.raises(InputError, match=r"to_torch: expected a SequenceRegressor or LSTMRegressor, got dict"):
        to_torch({})
    with pytest.raises(InputError, match=r"well_model\.model_"):
        to_torch(WellModel(["PHIF"], "KLOGH"))
    mean = MemberMean([SequenceRegressor(), SequenceRegressor()], [42, 0])
    with pytest.raises(InputError, match=r"the mean of 2 transformers .* to_torch\(well_model\.model_\.members\[k\]\)"):
        to_torch(mean)


class _Ramp(PositionalEncoding):
    """An encoding glassformer.interop does not know: p_t = t."""

    def _encode(self, t):
        return np.repeat(t[..., None], self.d_model, axis=-1).astype(self.dtype), {}


def test_an_encoding_without_counterpart_is_named():
    model = SequenceRegressor(d_model=4, num_heads=1)
    model.build_network(1)
    model.network_.positional = _Ramp(4)
    with pytest.raises(InputError, match=r"to_torch: positional 'sinusoidal' \(_Ramp\) has no PyTorch counterpart "
                                         r"here; supported: 'sinusoidal', .*'rotary'"):
        to_torch(model)


def test_an_embedding_without_counterpart_is_named():
    model = SequenceRegressor(d_model=4, num_heads=1)
    model.build_network(2)
    model.network_.embedding = _Ramp(4)
    with pytest.raises(InputError, match=r"input_embedding 'linear' \(_Ramp\) has no PyTorch counterpart"):
        to_torch(model)


def test_a_foreign_module_needs_its_architecture():
    with pytest.raises(InputError, match=r"not made by to_torch\); pass model=SequenceRegressor"):
        from_torch(torch.nn.Linear(2, 3))
    with pytest.raises(InputError, match=r"from_torch: expected a torch.nn.Module or a state_dict, got str"):
        from_torch("model.pt")


def test_weights_that_do_not_fit_name_the_keys():
    model = SequenceRegressor(d_model=8, num_heads=2)
    model.build_network(2)
    module = to_torch(model)
    with pytest.raises(StateDictError, match=r"from_torch: the module's weights do not fit SequenceRegressor\("
                                             r"d_model=8, .*num_layers=2.*missing keys \['encoder\.layers\.1\."):
        from_torch(module, model=SequenceRegressor(d_model=8, num_heads=2, num_layers=2))
    state = dict(module.state_dict())
    state.pop("head.weight")
    with pytest.raises(InputError, match=r"cannot read n_features and n_targets"):
        from_torch(state, model=SequenceRegressor(d_model=8, num_heads=2))


def test_a_padding_mask_with_fourier_mixing_is_refused():
    model = SequenceRegressor(d_model=4, num_heads=1, mixer="fourier")
    model.build_network(1)
    module = to_torch(model)
    X = torch.zeros(2, 5, 1, dtype=torch.float64)
    with pytest.raises(ValueError, match="FourierMixing supports no padding mask"):
        module(X, src_key_padding_mask=torch.zeros(2, 5, dtype=torch.bool))
