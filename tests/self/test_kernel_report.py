"""The kernel report beside the score: where the kernel ran, its build, its time next to the reference kernels'
(grader/cuda/kernel_report.py), and nvcc's registers and shared memory per kernel where nvcc exists."""

import shutil

import pytest

from grader.cuda import nvcc
from helpers import ROOT, run_grader


def test_reference_kernel_report(tmp_path):
    proc = run_grader("grade", "--submission", ROOT / "solutions", "--exercise", "cuda_kernel",
                      "--report-dir", tmp_path, timeout=600)
    out = " ".join(proc.stdout.split())  # the scorecard wraps long lines
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "kernel report: ran on the CPU runtime" in out
    assert "at 12x1024x64: your kernel" in out
    assert "the reference's tiled kernel takes" in out and "the lesson's four kernels" in out
    if shutil.which("nvcc"):
        assert "nvcc sm_90, per kernel:" in out and "flash_kernel: " in out and "registers" in out


NAMED_KERNELS = r"""
namespace attn { namespace detail {
__global__ void flash_kernel(const float* Q, float* O, int T) { if (threadIdx.x < T) O[threadIdx.x] = Q[threadIdx.x]; }
} }
template <int TILE>
__global__ void tiled_kernel(const float* Q, float* O) { __shared__ float t[TILE]; t[threadIdx.x] = Q[threadIdx.x];
    __syncthreads(); O[threadIdx.x] = t[TILE - 1 - threadIdx.x]; }
template __global__ void tiled_kernel<64>(const float*, float*);
extern "C" __global__ void plain_kernel(float* O) { O[0] = 1.0f; }
"""


@pytest.mark.skipif(nvcc.checker() is None, reason="nvcc is not installed here")
def test_nvcc_report_names_kernels_as_written(tmp_path):
    """A kernel in a namespace and a template kernel are named as the student wrote them, not as the linker
    spells them (_ZN4attn6detail12flash_kernelEPKfPfi, _Z12tiled_kernelILi64EEvPKfPf)."""
    source = tmp_path / "named.cu"
    source.write_text(NAMED_KERNELS)
    ok, report = nvcc.nvcc_check(source)
    assert ok is True, report
    names = sorted(line.split(": ")[0] for line in report.splitlines())
    assert names == ["attn::detail::flash_kernel", "plain_kernel", "tiled_kernel<64>"], report
    assert "tiled_kernel<64>: " in report and "256 bytes shared memory" in report
