"""The kernel report beside the score: where the kernel ran, its build, its time next to the reference kernels'
(grader/cuda/kernel_report.py), and nvcc's registers and shared memory per kernel where nvcc exists."""

import shutil

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
