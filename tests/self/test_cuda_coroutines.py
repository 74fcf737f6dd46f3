"""Kernels that wait, also as coroutines (grader/cuda/coroutines.py and coroutine_copies.py; the runtime's
include/cuda_cpu/detail/coroutines.h, src/coroutine_threads.cpp and src/thread_choice.cpp): which functions get a
copy, why a file stays on fibers, and that a kernel run as coroutines gives what it gives on fibers, in both thread
orders, with the same reports (CUDA_CPU_THREADS forces one way)."""

import ctypes
import re
import textwrap

import numpy as np
import pytest

from grader.cuda import build as cuda_build, coroutines, thread_kinds
from grader.cuda.rewrite import rewrite
from grader.sandbox import runtime_words
from test_cuda_cpu import ASSERTS, DIAGNOSES, assert_diagnosed, diagnosed_worker

F32P = ctypes.POINTER(ctypes.c_float)

# Every kind of wait, in a device function and in the kernel; each thread writes what it saw into out[t * 16 + k].
WAITS = """\
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ float block_sum(float* s, float v) {
    s[threadIdx.x] = v;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
        __syncthreads();
    }
    float total = s[0];
    __syncthreads();
    return total;
}
__device__ int twice(float* s, float v) { return (int)block_sum(s, v) + (int)block_sum(s, 2 * v); }
__global__ void waits(float* out, int n) {
    __shared__ float s[64];
    cg::thread_block cta = cg::this_thread_block();
    int t = threadIdx.x;
    float* o = out + (blockIdx.x * blockDim.x + t) * 16;
    o[0] = block_sum(s, (float)t);
    o[1] = twice(s, 1.0f);
    o[2] = __syncthreads_count(t % 3 == 0);
    o[3] = __syncthreads_and(t < 64);
    o[4] = __syncthreads_or(t == 5);
    o[5] = __shfl_sync(0xffffffffu, t * 10, 3);
    o[6] = __shfl_xor_sync(0xffffffffu, t, 1);
    o[7] = __shfl_down_sync(0xffffffffu, t, 4, 16);
    o[8] = __shfl_up_sync(0xffffffffu, t, 2);
    o[9] = (float)__ballot_sync(0xffffffffu, t % 2);
    o[10] = __any_sync(0xffffffffu, t == 40);
    o[11] = __all_sync(0xffffffffu, t < n);
    __syncwarp();
    s[t] = t;
    cta.sync();
    o[12] = s[(t + 1) % blockDim.x];
    cg::sync(cta);
    if (t >= 60) return;  // the threads that return count as arrived at the barrier below
    s[t] = -t;
    __syncthreads();
    o[13] = s[(t + 1) % 60];
}
extern "C" void run(float* out, int blocks, int n) { waits<<<blocks, 64>>>(out, n); cudaDeviceSynchronize(); }
"""


def _expected(blocks):
    out = np.zeros((blocks, 64, 16), np.float32)
    t = np.arange(64)
    lane, base = t % 32, t - t % 32
    out[..., 0] = t.sum()
    out[..., 1] = 64 + 128
    out[..., 2] = (t % 3 == 0).sum()
    out[..., 3] = 1
    out[..., 4] = 1
    out[..., 5] = (base + 3) * 10
    out[..., 6] = t ^ 1
    down = lane + 4
    out[..., 7] = np.where(down < (lane - lane % 16) + 16, base + down, t)
    out[..., 8] = np.where(lane >= 2, t - 2, t)
    out[..., 9] = float(0xAAAAAAAA)
    out[..., 10] = np.where(t >= 32, 1, 0)
    out[..., 11] = np.where(t < 32, 1, 0)  # n = 50: warp 0 all below it
    out[..., 12] = (t + 1) % 64
    out[..., 13] = np.where(t < 60, -((t + 1) % 60), 0)
    return out


def _run_waits(tmp_path, monkeypatch, way, order, blocks=6):
    monkeypatch.setenv("CUDA_CPU_THREADS", way)
    monkeypatch.setenv("CUDA_CPU_ORDER", order)
    path = tmp_path / "waits.cu"
    path.write_text(WAITS)
    library = cuda_build.build(path)
    lib = ctypes.CDLL(str(library))
    lib.cuda_cpu_launch_error.restype = lib.cuda_cpu_threads.restype = ctypes.c_char_p
    lib.cuda_cpu_begin_call()
    out = np.zeros((blocks, 64, 16), np.float32)
    lib.run(out.ctypes.data_as(F32P), blocks, 50)
    assert lib.cuda_cpu_launch_error() == b""
    return library, out, runtime_words.english(lib.cuda_cpu_threads().decode())


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_every_wait_gives_the_same_as_a_coroutine_as_on_a_fiber(tmp_path, monkeypatch, order):
    library, on_fibers, said = _run_waits(tmp_path, monkeypatch, "fibers", order)
    assert thread_kinds.threads_of(library) == thread_kinds.BothWays(("waits",), ("block_sum", "twice"))
    assert said.strip() == "waits: its threads ran on fibers (CUDA_CPU_THREADS=fibers)"
    _, as_coroutines, said = _run_waits(tmp_path, monkeypatch, "coroutines", order)
    assert said.strip() == "waits: its threads ran as coroutines (CUDA_CPU_THREADS=coroutines)"
    expected = _expected(6)
    assert np.array_equal(on_fibers, expected), np.argwhere(on_fibers != expected)[:5]
    assert np.array_equal(as_coroutines, expected), np.argwhere(as_coroutines != expected)[:5]


def test_the_first_blocks_measure_both_ways_and_the_report_says_which_ran(tmp_path, monkeypatch):
    _, out, said = _run_waits(tmp_path, monkeypatch, "measure", "forward", blocks=80)
    assert np.array_equal(out, _expected(80))
    m = re.fullmatch(r"waits: its threads ran (as coroutines|on fibers): a block took [\d.e+-]+ ms of CPU (as "
                     r"coroutines|on fibers) and [\d.e+-]+ ms (on fibers|as coroutines) \(the first 16 blocks, "
                     r"each way in turn\)", said.strip())
    assert m and m.group(1) == m.group(2) != m.group(3), said
    # a launch too small to measure runs the way the last measured one chose
    _, out, said = _run_waits(tmp_path, monkeypatch, "measure", "forward", blocks=10)
    assert np.array_equal(out, _expected(10))
    assert said.strip() == f"waits: its threads ran {m.group(1)} (as measured at an earlier launch)"


def test_a_copy_keeps_the_lines_of_the_function_it_copies():
    text = rewrite(WAITS, "waits.cu")
    made = coroutines.transform(text, "waits.cu")
    assert (made.kernels, made.functions) == (("waits",), ("block_sum", "twice"))
    lines = made.text.splitlines()
    assert lines[0] == '#include "cuda_cpu/detail/coroutines.h"'
    copies = [(int(m.group(1)), i) for i, line in enumerate(lines) if (m := re.match(r'#line (\d+) "waits.cu"', line))]
    original = WAITS.splitlines()
    assert [first for first, _ in copies] == [1, 3, 14, 14, 15, 15, 42]  # the rewrite's, then one pair a copy
    for (first, at), (after, _), name in zip(copies[1::2], copies[2::2], ("block_sum", "twice", "waits")):
        copy = lines[at + 1:at + 1 + after - first]
        # the copy spans the lines of the function it copies: each line of it is that line, edited
        assert name in copy[0] and name in original[first - 1]
        assert len(copy) == len([ln for ln in original[first - 1:after - 1]])
        assert lines[at + 1 + len(copy)] == f'#line {after} "waits.cu"'


FIBERS_ONLY = {
    "a lambda": ("__global__ void k(float* x) { auto f = [&] { __syncthreads(); }; f(); x[0] = 1; }",
                 "a lambda in k waits"),
    "a method": ("struct S { __device__ void all() { __syncthreads(); } };\n"
                 "__global__ void k(float* x) { S s; s.all(); }", "a method waits (all, line 1)"),
    "a pointer": ("__device__ void w() { __syncthreads(); }\n"
                  "__global__ void k(float* x) { void (*p)() = &w; p(); }",
                  "w waits and is used other than by a call (line 2)"),
    "a deduced type": ("__device__ auto w() { __syncthreads(); return 1; }\n__global__ void k(int* x) { x[0] = w(); }",
                       "w waits, and its return type (auto) cannot be a coroutine's"),
    "a macro": ("#define SYNC __syncthreads()\n__global__ void k(float* x) { SYNC; x[0] = 1; }",
                "a wait in k is written by a macro of the file (line 2)"),
    "a warp reduction": ("__global__ void k(int* x) { x[0] = __reduce_add_sync(~0u, 1); }",
                         "k uses a warp reduction, match, or a cooperative group's shuffle or vote (line 1), "
                         "which run on fibers"),
}


@pytest.mark.parametrize("form", FIBERS_ONLY)
def test_what_the_copies_cannot_be_sure_of_stays_on_fibers_and_says_why(form):
    source, why = FIBERS_ONLY[form]
    made = coroutines.transform(rewrite(source + "\n", "k.cu"), "k.cu")
    assert isinstance(made, coroutines.OnFibers), made
    assert made.words() == why


def test_a_file_that_does_not_wait_is_not_parsed():
    assert coroutines.transform(rewrite("__global__ void k(float* x) { x[0] = 1; }\n", "k.cu"), "k.cu") is None


@pytest.fixture(scope="module")
def as_coroutines(tmp_path_factory):
    """The runtime's own reports (test_cuda_cpu.py's DIAGNOSED kernel) with its threads as coroutines."""
    yield from diagnosed_worker(tmp_path_factory, CUDA_CPU_THREADS="coroutines")


@pytest.mark.parametrize("mode,message", DIAGNOSES, ids=[f"mode{m}" for m, _ in DIAGNOSES])
def test_a_coroutine_thread_s_bad_access_is_named_as_a_fiber_s(as_coroutines, mode, message):
    assert_diagnosed(as_coroutines, mode, message)


def test_a_coroutine_thread_that_returns_early_or_asserts_is_reported(as_coroutines, tmp_path, monkeypatch):
    from grader.common.failures import StudentCodeError
    from grader.sandbox.client import Submission
    x = np.arange(6 * 64, dtype=np.float32).reshape(6, 1, 64)
    assert np.isnan(as_coroutines.call("causal_attention_forward", x, x, x).reshape(-1)[:16]).all()
    # (every run of this worker, the faulting ones above too, has its threads as coroutines)
    assert runtime_words.english(as_coroutines.threads).strip() == \
        "k: its threads ran as coroutines (CUDA_CPU_THREADS=coroutines)"
    assert "16 of 32 threads (thread (16,0,0) first) had returned before the __syncthreads() on line 14" in \
        as_coroutines.warnings
    monkeypatch.setenv("CUDA_CPU_THREADS", "coroutines")
    (tmp_path / "asserts.cu").write_text(ASSERTS)
    with Submission(tmp_path, kernel_library=cuda_build.build(tmp_path / "asserts.cu"), timeout=30) as sub:
        x = np.arange(64, dtype=np.float32).reshape(1, 1, 64)
        x.reshape(-1)[9] = np.nan
        with pytest.raises(StudentCodeError) as caught:
            sub.call("causal_attention_forward", x, x, x)
    assert "assert(tile[t] == tile[t]) failed at asserts.cu:7 in thread (9,0,0)" in str(caught.value)


def test_divergent_barriers_are_reported_alike_both_ways(tmp_path, monkeypatch):
    source = textwrap.dedent("""
        __device__ void wait_here() { __syncthreads(); }
        __global__ void k(float* x) {
            if (threadIdx.x < 16) wait_here();
            else __syncthreads();
            x[threadIdx.x] = 1.0f;
        }
        extern "C" void run(float* x) { k<<<1, 32>>>(x); }
    """)
    (tmp_path / "k.cu").write_text(source)
    said = {}
    for way in ("fibers", "coroutines"):
        monkeypatch.setenv("CUDA_CPU_THREADS", way)
        lib = ctypes.CDLL(str(cuda_build.build(tmp_path / "k.cu")))
        lib.cuda_cpu_launch_error.restype = ctypes.c_char_p
        lib.cuda_cpu_begin_call()
        lib.run(np.zeros(32, np.float32).ctypes.data_as(F32P))
        said[way] = runtime_words.english(lib.cuda_cpu_launch_error().decode())
    assert said["fibers"] == said["coroutines"]
    assert "different barriers" in said["fibers"] and "line 2" in said["fibers"] and "line 5" in said["fibers"]


# A kernel that waits reads threadIdx in its body (through its copy's Tag), in a lambda without captures and in a
# local class's method (neither sees the Tag: they keep the core's thread-local).
SCOPES = """\
__global__ void scopes(int* out) {
    __shared__ int s[64];
    struct Lane { __device__ static int of() { return threadIdx.x % 32; } };
    auto twice = [] { return 2 * (int)threadIdx.x; };
    s[threadIdx.x] = twice();
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x] * 100 + Lane::of();
}
extern "C" void run(int* out) { scopes<<<3, 64>>>(out); cudaDeviceSynchronize(); }
"""


def test_a_copy_reads_threadidx_through_its_tag_but_not_in_its_lambdas_and_local_classes(tmp_path, monkeypatch):
    made = coroutines.transform(rewrite(SCOPES, "scopes.cu"), "scopes.cu")
    copy = made.text[made.text.index("cuda_cpu::co::Kernel scopes"):]
    assert copy.count("cuda_cpu_co_threadIdx") == 3 and "return 2 * (int)threadIdx.x" in copy
    assert "return threadIdx.x % 32" in copy
    (tmp_path / "scopes.cu").write_text(SCOPES)
    t = np.arange(64)
    expected = np.tile(2 * ((t + 1) % 64) * 100 + t % 32, 3).astype(np.int32)
    for way in ("fibers", "coroutines"):
        monkeypatch.setenv("CUDA_CPU_THREADS", way)
        lib = ctypes.CDLL(str(cuda_build.build(tmp_path / "scopes.cu")))
        lib.cuda_cpu_launch_error.restype = ctypes.c_char_p
        lib.cuda_cpu_begin_call()
        out = np.zeros(3 * 64, np.int32)
        lib.run(out.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)))
        assert lib.cuda_cpu_launch_error() == b""
        assert np.array_equal(out, expected), (way, out[:8], expected[:8])
