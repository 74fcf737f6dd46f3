"""The GPU path (csrc/cuda_gpu): on this GPU-less machine it can be built, not run. These tests check that nvcc
links the reference kernel with the harness into a library that exports what the worker calls, and that the
choice of device follows GRADER_KERNEL_DEVICE."""

import shutil
import subprocess

import pytest

from grader.cuda import build as cuda_build
from helpers import ROOT


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed here")
def test_reference_kernel_links_with_the_device_harness():
    lib = cuda_build.build_gpu(ROOT / "solutions" / "microgpt_cuda.cu", arch=cuda_build.NVCC_ARCH)
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True).stdout
    assert " T gpu_run" in symbols and " T causal_attention_forward" in symbols


def test_device_choice(monkeypatch):
    cuda_build.gpu_present.cache_clear()
    monkeypatch.setenv(cuda_build.DEVICE_CHOICE, "cpu")
    assert cuda_build.gpu_present() is False
    cuda_build.gpu_present.cache_clear()
    monkeypatch.setenv(cuda_build.DEVICE_CHOICE, "gpu")
    if shutil.which("nvidia-smi") is None:
        with pytest.raises(cuda_build.MissingToolchain, match="GRADER_KERNEL_DEVICE=gpu, but this machine has no GPU"):
            cuda_build.gpu_present()
    cuda_build.gpu_present.cache_clear()
