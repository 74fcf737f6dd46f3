"""Split copies (grader/cuda/split_plan.py, uniform_values.py, split_copies.py; the runtime's Split in
include/cuda_cpu/detail/launch.h): which kernels get one, and that a kernel run as loops between its barriers gives
what it gives on fibers, in both thread orders: the same results, the same races (a missing barrier reads what it
reads on fibers), the same warnings and asserts."""

import ctypes

import numpy as np
import pytest

from grader.sandbox import runtime_words
from split_helpers import built, transformed, why_not_split_each

F32P = ctypes.POINTER(ctypes.c_float)
THREADS = 64

KERNELS = """\
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// each turn's values in turn in one of two buffers: one barrier a turn (the bench's kernel)
__global__ void rounds(const float* in, float* out, int turns) {
    __shared__ float s[2][64];
    unsigned t = threadIdx.x, n = blockDim.x;
    float acc = in[blockIdx.x * n + t];
    for (int r = 0; r < turns; ++r) {
        s[r & 1][t] = acc;
        __syncthreads();
        acc = acc * 0.5f + s[r & 1][(t + 1) % n];
    }
    out[blockIdx.x * n + t] = acc;
}
// no barrier after the read: the next turn's store overwrites what a later thread has yet to read (a race)
__global__ void tile_race(const float* in, float* out, int turns) {
    __shared__ float tile[64];
    int t = threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < turns; ++k) {
        tile[t] = in[(blockIdx.x * turns + k) * 64 + t];
        __syncthreads();
        acc += tile[(t + 1) % 64];
    }
    out[blockIdx.x * 64 + t] = acc;
}
// no barrier between the store before the loop and the loop's first read (a race)
__global__ void entry_race(const float* in, float* out, int turns) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    float acc = 0.0f;
    for (int k = 0; k < turns; ++k) {
        acc += s[(t + 1) % 64] * (k + 1);
        __syncthreads();
        s[t] = acc;
        __syncthreads();
    }
    out[blockIdx.x * 64 + t] = acc + s[(t + 3) % 64];
}
// a parameter each thread moves, a thread block's sync, uniform values, a per-thread array, an early return
__global__ void mixed(const float* in, float* out, int turns, int alive) {
    cg::thread_block block = cg::this_thread_block();
    const int base = blockIdx.x * blockDim.x;
    in += base + threadIdx.x;
    __shared__ float s[64];
    int t = threadIdx.x;
    float keep[3];
    for (int j = 0; j < 3; ++j) keep[j] = *in * (j + 1);
    if (t >= alive) return;
    for (int k = 0, step = 2; k < turns; k += step) {
        s[t] = keep[k % 3];
        block.sync();
#pragma unroll
        for (int j = 0; j < 3; ++j) {
            if (j == 1) continue;
            keep[j] += s[(t + j) % alive];
        }
        cg::sync(block);
    }
    out[base + t] = keep[0] + keep[1] + keep[2];
}
extern "C" int run(int which, const float* in, float* out, int blocks, int turns, int alive) {
    if (which == 0) rounds<<<blocks, 64>>>(in, out, turns);
    if (which == 1) tile_race<<<blocks, 64>>>(in, out, turns);
    if (which == 2) entry_race<<<blocks, 64>>>(in, out, turns);
    if (which == 3) mixed<<<blocks, 64>>>(in, out, turns, alive);
    return cudaDeviceSynchronize();
}
"""
NAMES = ("rounds", "tile_race", "entry_race", "mixed")


def test_each_kernel_that_only_waits_at_uniform_barriers_gets_a_split_copy():
    assert transformed(KERNELS).split == tuple(sorted(NAMES))


REFUSED = {
    "a barrier inside an if": ("if (blockIdx.x > 0) { __syncthreads(); }", "a barrier inside a if_stmt"),
    "a loop bound by thread": ("for (int k = 0; k < threadIdx.x; ++k) { __syncthreads(); }",
                              "a loop around a barrier whose head may differ by thread"),
    "a loop bound read from memory": ("for (int k = 0; k < p[0]; ++k) { __syncthreads(); }",
                                      "a loop around a barrier whose head may differ by thread"),
    "a loop variable a thread assigns": ("for (int k = 0; k < 4; ++k) { p[k] = 1; __syncthreads(); k += p[1]; }",
                                         "whose variables differ by thread"),
    "a break out of the part": ("for (int k = 0; k < 4; ++k) { if (p[k] > 0) break; __syncthreads(); }",
                                "a break or continue leaves the code between barriers"),
    "a shuffle": ("p[0] = __shfl_sync(0xffffffffu, p[0], 0); __syncthreads();",
                  "it waits at barriers and at shuffles"),
    "a nested loop of barriers": ("for (int k = 0; k < 4; ++k) { for (int j = 0; j < 2; ++j) { __syncthreads(); } }",
                                  "a barrier inside a for_stmt"),
}


@pytest.fixture(scope="module")
def refused():
    return why_not_split_each({case: body for case, (body, _why) in REFUSED.items()})


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_kernel_whose_barriers_may_diverge_or_that_waits_otherwise_keeps_the_scheduler(refused, case):
    said, split = refused[case]
    assert said is not None and REFUSED[case][1] in said, said
    assert not split


def _run(tmp_path, monkeypatch, way, order, which, turns=5, alive=THREADS, blocks=3):
    lib = built(tmp_path, monkeypatch, KERNELS, way, order)
    rng = np.random.default_rng(which)
    data = rng.standard_normal(blocks * max(turns, 1) * THREADS).astype(np.float32)
    out = np.zeros(blocks * THREADS, np.float32)
    assert lib.run(which, data.ctypes.data_as(F32P), out.ctypes.data_as(F32P), blocks, turns, alive) == 0
    assert lib.cuda_cpu_launch_error() == b""
    said = runtime_words.english(lib.cuda_cpu_threads().decode()).strip()
    return out, said, runtime_words.english(lib.cuda_cpu_warnings().decode())


@pytest.mark.parametrize("which", range(len(NAMES)), ids=NAMES)
def test_a_split_kernel_gives_what_it_gives_on_fibers_in_either_order(tmp_path, monkeypatch, which):
    outs = {}
    for order in ("forward", "reverse"):
        split, said, warned = _run(tmp_path, monkeypatch, None, order, which)
        assert said == f"{NAMES[which]}: its threads ran as loops between its barriers (its split copy: every " \
                       f"thread of a block reaches each __syncthreads() together)"
        for way in ("fibers", "coroutines"):
            other, _said, other_warned = _run(tmp_path, monkeypatch, way, order, which)
            assert np.array_equal(split, other, equal_nan=True), (way, order, np.argwhere(split != other)[:5])
            assert warned == other_warned
        outs[order] = split
    # the races show as they do on fibers: the two orders read different values
    assert np.array_equal(outs["forward"], outs["reverse"], equal_nan=True) == (NAMES[which] in ("rounds", "mixed"))


def test_threads_that_return_before_a_barrier_count_as_arrived_with_the_scheduler_s_warning(tmp_path, monkeypatch):
    split, _said, warned = _run(tmp_path, monkeypatch, None, "forward", 3, alive=40)
    fibers, _said, fibers_warned = _run(tmp_path, monkeypatch, "fibers", "forward", 3, alive=40)
    assert np.array_equal(split, fibers, equal_nan=True)
    assert "24 of 64 threads (thread (40,0,0) first) had returned before the __syncthreads() on line 53" in warned, \
        warned
    assert warned == fibers_warned


def test_no_loop_turn_at_all(tmp_path, monkeypatch):
    """A loop of barriers that never turns: the code before it runs with the code after it."""
    for which in range(len(NAMES)):
        split, _said, _w = _run(tmp_path, monkeypatch, None, "forward", which, turns=0)
        fibers, _said, _w = _run(tmp_path, monkeypatch, "fibers", "forward", which, turns=0)
        assert np.array_equal(split, fibers, equal_nan=True), NAMES[which]


def test_a_split_copy_keeps_the_kernel_s_lines():
    text = transformed(KERNELS).text
    copy = text[text.index("rounds(cuda_cpu::Split&"):]
    copy = copy[:copy.index("\n}\n")]
    assert '#line 9 "k.cu"\ns[r & 1][t] = acc;' in copy and '#line 13 "k.cu"\nout[blockIdx.x * n + t] = acc;' in copy
