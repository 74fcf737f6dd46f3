"""The GPU the CPU runtime stands for (csrc/cuda_cpu/src/gpu_table.h, read by the runtime and by grader/cuda/gpus.py):
what cudaGetDeviceProperties and cudaDeviceGetAttribute answer is that GPU's row, for each GPU of the table, and
its limits decide which launches are refused (tests/cuda_conformance/launch_limits.cu checks the default's)."""

import os
import subprocess
import sys

import pytest

from grader.cuda import build as cuda_build, gpus, nvcc
from helpers import ROOT, run_grader

PROPERTIES = r"""
#include <cstdio>
__global__ void touch(float* out) { extern __shared__ float s[]; s[0] = 1.0f; out[0] = s[0]; }
int main() {
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    int optin = 0, sms = 0;
    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    printf("%s|%d|%d|%d|%d|%d|%d|%d|%zu|%zu|%zu|%d|%d|%d\n", p.name, p.major, p.minor, p.multiProcessorCount,
           p.maxThreadsPerMultiProcessor, p.maxBlocksPerMultiProcessor, p.regsPerMultiprocessor, p.regsPerBlock,
           p.sharedMemPerMultiprocessor, p.sharedMemPerBlockOptin, p.reservedSharedMemPerBlock, p.l2CacheSize,
           optin == (int)p.sharedMemPerBlockOptin, sms == p.multiProcessorCount);
    float* out;
    cudaMalloc(&out, sizeof(float));
    cudaFuncSetAttribute(touch, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p.sharedMemPerBlockOptin);
    touch<<<1, 1, p.sharedMemPerBlockOptin>>>(out);
    printf("the most a block may have: %s\n", cudaGetErrorName(cudaGetLastError()));
    touch<<<1, 1, p.sharedMemPerBlockOptin + 4>>>(out);
    printf("4 bytes more: %s\n", cudaGetErrorName(cudaGetLastError()));
    return 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    folder = tmp_path_factory.mktemp("properties")
    (folder / "properties.cu").write_text(PROPERTIES)
    return cuda_build.build_program(folder, ["properties.cu"])


@pytest.mark.parametrize("key", list(gpus.table()))
def test_the_runtime_answers_with_the_row_of_the_gpu_it_stands_for(program, key):
    gpu = gpus.table()[key]
    done = subprocess.run([str(program)], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, **{gpus.GPU_VAR: key}))
    assert done.returncode == 0, done.stdout + done.stderr
    first, *launches = done.stdout.splitlines()
    name, *numbers = first.split("|")
    assert name == f"CPU runtime (emulating the {gpu.name}, {gpu.arch})"
    assert list(map(int, numbers)) == [gpu.major, gpu.minor, gpu.sms, gpu.threads_per_sm, gpu.blocks_per_sm,
                                       gpu.regs_per_sm, gpu.regs_per_block, gpu.shared_per_sm,
                                       gpu.shared_per_block_optin, gpu.shared_reserved_per_block, gpu.l2_bytes, 1, 1]
    assert launches == ["the most a block may have: cudaSuccess", "4 bytes more: cudaErrorInvalidValue"]


def test_the_default_is_the_table_s_first_row_and_an_unknown_name_is_said():
    assert gpus.chosen({}).key == next(iter(gpus.table())) == "H100"
    with pytest.raises(gpus.UnknownGpu, match="GRADER_GPU=V100 is not a GPU the CPU runtime stands for; choose one"):
        gpus.chosen({gpus.GPU_VAR: "V100"})
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", "--submission", str(ROOT / "solutions"),
                           "--exercise", "compute_dk", "--pictures", "none"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, **{gpus.GPU_VAR: "V100"}))
    assert proc.returncode == 2 and "GRADER_GPU=V100 is not a GPU the CPU runtime stands for" in proc.stderr


def test_grade_checks_the_kernel_against_the_gpu_named(tmp_path):
    """The opt-in control asks for 64 KiB of dynamic shared memory: a T4 (64 KiB a block) still starts it."""
    from grader.dev import controls
    control = next(c for c in controls.all_controls() if c.name == "kernel_shared_opt_in")
    (tmp_path / "sub").mkdir()
    for name, text in controls.files(control).items():
        (tmp_path / "sub" / name).write_text(text)
    proc = run_grader("grade", "--submission", tmp_path / "sub", "--exercise", "cuda_kernel", "--gpu", "T4",
                      "--pictures", "none")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = " ".join(proc.stdout.split())
    assert "standing for the Tesla T4 (sm_75" in said and "10 / 10" in said, proc.stdout


STATIC_AND_DYNAMIC = r"""
__global__ void tiles(float* out) {
    __shared__ float fixed[10240];  // 40 KiB of static shared memory
    extern __shared__ float more[];
    fixed[threadIdx.x] = 1.0f;
    more[threadIdx.x] = 2.0f;
    out[threadIdx.x] = fixed[threadIdx.x] + more[threadIdx.x];
}
extern "C" int launch(int dynamic_bytes, int opt_in) {
    float* out;
    cudaMalloc(&out, 32 * sizeof(float));
    if (opt_in) cudaFuncSetAttribute(tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic_bytes);
    tiles<<<1, 32, dynamic_bytes>>>(out);
    int error = cudaGetLastError();
    cudaFree(out);
    return error;
}
"""


@pytest.mark.skipif(nvcc.checker() is None, reason="needs nvcc's counts")
def test_static_and_dynamic_shared_memory_count_together_as_nvcc_counts_the_static(tmp_path):
    """40 KiB of static arrays (nvcc's count, linked in by grader/cuda/resources.py) and 16 KiB of dynamic shared
    memory: 56 KiB, over the 48 KiB a block gets without the opt-in (a GPU: cudaErrorInvalidValue); opted in, it
    runs. 8 KiB of dynamic memory fits without."""
    import ctypes
    from grader.cuda import resources
    source = tmp_path / "tiles.cu"
    source.write_text(STATIC_AND_DYNAMIC)
    assert resources.of(source) == [("tiles", resources.of(source)[0][1], 40960)]
    lib = ctypes.CDLL(str(cuda_build.build(source, resources=resources.for_build(source))))
    invalid_value = 1
    assert lib.launch(16384, 0) == invalid_value
    assert lib.launch(16384, 1) == 0
    assert lib.launch(8192, 0) == 0


OCCUPANCY = r"""
__global__ void k(float* out) { out[threadIdx.x] = 1.0f; }
extern "C" int active_blocks(int block_size, int dynamic_shared) {
    int blocks = -1;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, block_size, dynamic_shared);
    return blocks;
}
extern "C" int potential(int* min_grid) {
    int block = -1;
    cudaOccupancyMaxPotentialBlockSize(min_grid, &block, k, 0, 0);
    return block;
}
extern "C" int attributes(int* max_threads, int* max_dynamic) {
    cudaFuncAttributes a;
    cudaFuncGetAttributes(&a, k);
    *max_threads = a.maxThreadsPerBlock;
    *max_dynamic = a.maxDynamicSharedSizeBytes;
    return a.numRegs;
}
"""


@pytest.mark.parametrize("gpu, registers, block, shared, blocks", [
    ("H100", 64, 128, 48 * 1024, 4),     # the occupancy calculator's example: limited by shared memory (25%)
    ("H100", 32, 256, 0, 8),             # 64 warps: 100%
    ("H100", 190, 1024, 0, 0),           # over the register file: no block fits
    ("H100", 0, 64, 0, 32),              # no counts: the 32 blocks an SM holds
    ("T4", 32, 256, 0, 4),               # 32 warps an SM
    ("A100", 64, 256, 100 * 1024, 1),    # 101 KiB a block with the reserved KiB, of 164
])
def test_occupancy_follows_the_calculator_s_rules_for_the_gpu(tmp_path, gpu, registers, block, shared, blocks):
    """With the kernel's counts given (as nvcc's would be), the CUDA occupancy calculator's answer; asked in a
    process of its own, since the runtime reads GRADER_GPU once."""
    from grader.cuda import resources
    source = tmp_path / "occupancy.cu"
    source.write_text(OCCUPANCY)
    rows = [("k", registers, 0)] if registers else []
    lib = cuda_build.build(source, resources=(resources.FILE, resources.table_source(rows)))
    ask = f"import ctypes; print(ctypes.CDLL({str(lib)!r}).active_blocks({block}, {shared}))"
    done = subprocess.run([sys.executable, "-c", ask], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, **{gpus.GPU_VAR: gpu}))
    assert done.stdout.strip() == str(blocks), done.stdout + done.stderr


LAUNCHED = OCCUPANCY + r"""
extern "C" const char* launch_and_report(int block_size, int dynamic_shared) {
    float* out;
    cudaMalloc(&out, 1024 * sizeof(float));
    cuda_cpu_begin_call();
    k<<<1, block_size, dynamic_shared>>>(out);
    k<<<2, block_size, dynamic_shared>>>(out);  // the same kernel again: one line for it
    return cuda_cpu_occupancy();
}
"""


@pytest.mark.parametrize("registers, block, shared, line", [
    (64, 128, 48 * 1024, "k: blocks of 128 threads (4 warps), 64 registers a thread, 49152 bytes of shared memory a "
                         "block: 4 blocks an SM, 16 of 64 warps (25% occupancy), limited by shared memory"),
    (32, 256, 0, "k: blocks of 256 threads (8 warps), 32 registers a thread, 0 bytes of shared memory a block: 8 "
                 "blocks an SM, 64 of 64 warps (100% occupancy), limited by the warps an SM holds"),
    (128, 256, 0, "k: blocks of 256 threads (8 warps), 128 registers a thread, 0 bytes of shared memory a block: 2 "
                  "blocks an SM, 16 of 64 warps (25% occupancy), limited by registers"),
    (0, 32, 0, "k: blocks of 32 threads (1 warps), registers not counted (no nvcc), 0 bytes of shared memory a "
               "block: 32 blocks an SM, 32 of 64 warps (50% occupancy), limited by the blocks an SM holds"),
])
def test_each_kernel_s_occupancy_and_its_limit_are_reported_once_a_call(tmp_path, registers, block, shared, line):
    """The kernel report's lines (issue: what Nsight Compute would say): the calculator's blocks an SM on the H100,
    the warps they keep busy of the 64 an SM holds, and the resource that binds first."""
    import ctypes
    from grader.cuda import resources
    source = tmp_path / "launched.cu"
    source.write_text('extern "C" void cuda_cpu_begin_call();\nextern "C" const char* cuda_cpu_occupancy();\n'
                      + LAUNCHED)
    rows = [("k", registers, 0)] if registers else []
    lib = ctypes.CDLL(str(cuda_build.build(source, resources=(resources.FILE, resources.table_source(rows)))))
    lib.launch_and_report.restype = ctypes.c_char_p
    from grader.sandbox import runtime_words
    assert runtime_words.english(lib.launch_and_report(block, shared).decode()) == line + "\n"


def test_the_potential_block_size_and_the_attributes_follow_nvcc_s_counts(tmp_path):
    """64 registers a thread on an H100: 1024 threads fill the register file (a second block would not fit), so
    1024 is the largest block with the most threads busy, and a grid of one block per SM fills the GPU."""
    import ctypes
    from grader.cuda import resources
    source = tmp_path / "occupancy.cu"
    source.write_text(OCCUPANCY)
    lib = ctypes.CDLL(str(cuda_build.build(source, resources=(resources.FILE, resources.table_source([("k", 64, 0)])))))
    min_grid = ctypes.c_int(-1)
    assert lib.potential(ctypes.byref(min_grid)) == 1024 and min_grid.value == 132
    max_threads, max_dynamic = ctypes.c_int(), ctypes.c_int()
    assert lib.attributes(ctypes.byref(max_threads), ctypes.byref(max_dynamic)) == 64
    assert max_threads.value == 1024 and max_dynamic.value == 48 * 1024
