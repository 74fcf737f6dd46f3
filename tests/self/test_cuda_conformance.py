"""The CPU runtime's conformance suite (tests/cuda_conformance): one small CUDA program per feature, each built with
the CPU runtime and run, its output compared with what a GPU prints (NAME.expected); where nvcc is installed,
each also compiles as real CUDA."""

import os
import subprocess

import pytest

from grader.cuda import build as cuda_build, nvcc
from helpers import ROOT

SUITE = ROOT / "tests" / "cuda_conformance"
PROGRAMS = sorted(p.name for p in SUITE.glob("*.cu"))


def test_every_program_has_its_expected_output():
    assert PROGRAMS and all((SUITE / name).with_suffix(".expected").is_file() for name in PROGRAMS)


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_cpu_runtime_prints_what_a_gpu_prints(name):
    program = cuda_build.build_program(SUITE, [name], files=[name])
    proc = subprocess.run([str(program)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == (SUITE / name).with_suffix(".expected").read_text(), proc.stderr


def test_static_shared_arrays_are_one_per_block_in_either_thread_order():
    """The block reduction's `static __shared__` partials, run with the warps and lanes last to first as well."""
    name = "static_shared_reduction.cu"
    program = cuda_build.build_program(SUITE, [name], files=[name])
    proc = subprocess.run([str(program)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "CUDA_CPU_ORDER": "reverse"})
    assert proc.stdout == (SUITE / name).with_suffix(".expected").read_text(), proc.stderr


@pytest.mark.skipif(nvcc.checker() is None, reason="nvcc is not installed here: the CUDA compile check is skipped")
@pytest.mark.parametrize("name", PROGRAMS)
def test_each_program_is_real_cuda(name):
    # as a student's kernel is checked: cached by the program's text, nvcc's version, the arch and include flags
    # (cooperative_groups.h, cuda_fp16.h and cuda_bf16.h need CUDA's C++ core library, nvidia-cuda-cccl, pinned)
    ok, text = nvcc.nvcc_check(SUITE / name)
    assert ok, text


def test_what_is_not_emulated_stops_the_build_with_its_name_and_the_line(tmp_path):
    """cg::this_grid() needs every block resident at once: the build says so at the line that asks for it."""
    (tmp_path / "grid.cu").write_text("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
                                      "__global__ void k() {\n    cg::this_grid().sync();\n}\n"
                                      "int main() { k<<<2, 32>>>(); return 0; }\n")
    with pytest.raises(cuda_build.NotEmulated) as failure:
        cuda_build.build_program(tmp_path, ["grid.cu"])
    assert str(failure.value).startswith(
        "cooperative_groups::this_grid() (grid-wide synchronization) is not emulated by the CPU runtime (your line 4 "
        "of grid.cu: cg::this_grid().sync();): blocks do not all run at once"), str(failure.value)
