"""The GPU path (csrc/cuda_gpu). Where nvcc exists, the reference kernel must link with the device harness into a
library that exports what the worker calls; where a GPU is listed too, it must run there and match the oracle;
the choice of device follows GRADER_KERNEL_DEVICE either way."""

import shutil
import subprocess
import sys

import numpy as np
import pytest

from grader.cuda import build as cuda_build, nvcc
from grader.judge import inputs, oracle, tolerances
from grader.sandbox.client import Submission
from helpers import ROOT


def _gpu_listed():
    """Whether nvidia-smi lists a GPU (asked here independently of nvcc.gpu_present, which the tests check)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    return subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30).stdout.startswith("GPU")


GPU = _gpu_listed() and shutil.which("nvcc") is not None


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed here")
def test_reference_kernel_links_with_the_device_harness():
    lib = nvcc.build_gpu(ROOT / "solutions" / "microgpt_cuda.cu", arch=nvcc.NVCC_ARCH)
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True).stdout
    assert " T gpu_run" in symbols and " T causal_attention_forward" in symbols


def test_device_choice(monkeypatch):
    nvcc.gpu_present.cache_clear()
    monkeypatch.setenv(nvcc.DEVICE_CHOICE, "cpu")
    assert nvcc.gpu_present() is False
    nvcc.gpu_present.cache_clear()
    monkeypatch.setenv(nvcc.DEVICE_CHOICE, "gpu")
    if GPU:
        assert nvcc.gpu_present() is True
    else:
        with pytest.raises(cuda_build.MissingToolchain, match="GRADER_KERNEL_DEVICE=gpu, but this machine has no GPU"):
            nvcc.gpu_present()
    nvcc.gpu_present.cache_clear()
    monkeypatch.delenv(nvcc.DEVICE_CHOICE)
    assert nvcc.gpu_present() is GPU
    nvcc.gpu_present.cache_clear()


@pytest.mark.skipif(not GPU, reason="no GPU here (nvidia-smi lists none, or no nvcc)")
def test_reference_kernel_runs_on_the_gpu_and_matches_the_oracle():
    lib = nvcc.build_gpu(ROOT / "solutions" / "microgpt_cuda.cu")
    Q, K, V = inputs.qkv(inputs.rng_for("gpu", 1), inputs.Case("T=33, 2 heads", (2,), 33), np.float32)
    with Submission(ROOT / "solutions", kernel_library=lib, kernel_device="gpu", timeout=120) as sub:
        got = sub.call("causal_attention_forward", Q, K, V)
    expected = oracle.causal_attention(Q, K, V)
    assert got.shape == V.shape and got.dtype == np.float32
    assert (np.abs(got - expected) <= tolerances.attention_bound(Q, K, V, np.float32)).all()


@pytest.mark.skipif(sys.platform != "linux", reason="nvcc is pinned for Linux only (requirements/grading.txt)")
def test_the_compile_check_uses_the_pinned_nvcc_so_the_maximum_is_the_same_everywhere():
    """A machine without a CUDA toolkit would skip test_compiles_as_cuda (worth 0), and the kernel's maximum
    would depend on the machine: the check runs PyPI's nvcc from this venv instead."""
    assert nvcc.checker().endswith("nvidia/cu13/bin/nvcc")
    ok, report = nvcc.nvcc_check(ROOT / "solutions" / "microgpt_cuda.cu")
    assert ok is True and "registers" in report
