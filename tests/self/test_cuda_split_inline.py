"""Split copies of kernels whose waits are in the __device__ functions they call (grader/cuda/split_inline.py): the
calls written into the kernel, the kernel then split at its helpers' barriers or shuffles. It gives what it gives on
fibers and as coroutines in both thread orders, its warnings name the helper's lines, and a call that cannot be
written in as the same program leaves the kernel on the scheduler."""

import ctypes
import re

import numpy as np
import pytest

from grader.cuda import coroutines, split_inline
from grader.cuda.coroutine_copies import Copies
from grader.cuda.rewrite import rewrite
from grader.sandbox import runtime_words
from split_helpers import built, transformed

F32P = ctypes.POINTER(ctypes.c_float)

KERNELS = """\
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// a helper that waits, called twice by a helper, in a loop of the kernel (as scan's scan1Inclusive)
__device__ float neighbour_sum(float* s, float v, int n) {
    int t = threadIdx.x;
    s[t] = v;
    __syncthreads();
    float w = s[(t + 1) % n];
    __syncthreads();
    return v + w;
}
__device__ float twice(float* s, float v, int n) {
    float a = neighbour_sum(s, v, n);
    return neighbour_sum(s, a * 0.5f, n) - v;
}
__global__ void helpers(const float* in, float* out, int rounds) {
    __shared__ float s[256];
    int t = threadIdx.x, n = blockDim.x;
    float v = in[blockIdx.x * n + t];
    for (int r = 0; r < rounds; ++r) {
        v = twice(s, v, n) + 1.0f;
    }
    out[blockIdx.x * n + t] = v;
}
// a warp's sum in a helper; the kernel has a variable of the helper's parameter's name
__device__ float warp_total(float v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}
__global__ void warps(const float* in, float* out, int rounds) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i] * rounds;
    float offset = warp_total(v);
    out[i] = offset + warp_total(v * 2.0f);
}
// a void helper given the thread block; threads that return before its barrier
__device__ void keep_first(cg::thread_block block, float* s, float* out, int i) {
    s[threadIdx.x] = out[i];
    cg::sync(block);
    out[i] = s[threadIdx.x] + s[0];
}
__global__ void group(const float* in, float* out, int alive) {
    cg::thread_block block = cg::this_thread_block();
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
    if (threadIdx.x >= alive) return;
    keep_first(block, s, out, i);
}
extern "C" int run(int which, const float* in, float* out, int blocks, int threads, int k) {
    if (which == 0) helpers<<<blocks, threads>>>(in, out, k);
    if (which == 1) warps<<<blocks, threads>>>(in, out, k);
    if (which == 2) group<<<blocks, threads>>>(in, out, k);
    return cudaDeviceSynchronize();
}
"""
NAMES = ("helpers", "warps", "group")
WAIT = {"helpers": "barriers", "warps": "shuffles", "group": "barriers"}


@pytest.fixture(scope="module")
def kernels():
    return transformed(KERNELS)


def test_a_kernel_whose_waits_are_in_its_helpers_gets_a_split_copy(kernels):
    assert kernels.split == tuple(sorted(NAMES))


def _run(tmp_path, monkeypatch, way, order, which, k, threads=64, blocks=3):
    lib = built(tmp_path, monkeypatch, KERNELS, way, order)
    data = np.random.default_rng(which).standard_normal(blocks * threads).astype(np.float32)
    out = np.zeros(blocks * threads, np.float32)
    assert lib.run(which, data.ctypes.data_as(F32P), out.ctypes.data_as(F32P), blocks, threads, k) == 0
    assert lib.cuda_cpu_launch_error() == b""
    return out, runtime_words.english(lib.cuda_cpu_threads().decode()).strip(), \
        runtime_words.english(lib.cuda_cpu_warnings().decode())


@pytest.mark.parametrize("which", range(len(NAMES)), ids=NAMES)
def test_a_kernel_split_in_its_helpers_gives_what_it_gives_on_fibers_in_either_order(tmp_path, monkeypatch, which):
    k = {"helpers": 3, "warps": 2, "group": 64}[NAMES[which]]
    for order in ("forward", "reverse"):
        split, said, _warned = _run(tmp_path, monkeypatch, None, order, which, k)
        assert said.startswith(f"{NAMES[which]}: its threads ran as loops between its {WAIT[NAMES[which]]}"), said
        for way in ("fibers", "coroutines"):
            other, _said, _warned = _run(tmp_path, monkeypatch, way, order, which, k)
            assert np.array_equal(split, other, equal_nan=True), (way, order, np.argwhere(split != other)[:5])


def test_a_helper_s_lines_are_its_own_in_the_warnings(tmp_path, monkeypatch):
    split, _said, warned = _run(tmp_path, monkeypatch, None, "forward", 2, 40)
    fibers, _said, fibers_warned = _run(tmp_path, monkeypatch, "fibers", "forward", 2, 40)
    assert np.array_equal(split, fibers, equal_nan=True)
    assert "24 of 64 threads (thread (40,0,0) first) had returned before the __syncthreads() on line 40 " in warned, \
        warned
    assert warned == fibers_warned


def test_a_split_copy_of_written_in_helpers_keeps_their_lines(kernels):
    text = kernels.text
    copy = text[text.index("helpers(cuda_cpu::Split&"):]
    copy = copy[:copy.index("\n}\n")]
    assert '#line 8 "k.cu"\n' in copy and "s[(cuda_cpu_in" in copy  # neighbour_sum's read, in its own line


HELPER = "__device__ float h(float* s, float v) { s[threadIdx.x] = v; __syncthreads(); return s[0] + v; }\n"
REFUSED = {
    "two returns": ("__device__ float h(float* s, float v) { s[threadIdx.x] = v; __syncthreads(); "
                    "if (v > 0) return v; return s[0]; }\n", "p[1] = h(p, p[0]);",
                    "h returns other than by its last statement"),
    "a call in &&": (HELPER, "bool ok = p[0] > 0 && h(p, p[1]) > 0; p[2] = ok;", "that is not always evaluated"),
    "a call in ?:": (HELPER, "p[2] = p[0] > 0 ? h(p, p[1]) : 0.0f;", "that is not always evaluated"),
    "a call in an if's head": (HELPER, "if (h(p, p[0]) > 0) p[1] = 0;", "a call of h in a if_stmt"),
    "a name the kernel shadows": ("__device__ float scale = 2.0f;\n__device__ float h(float* s, float v) { "
                                  "s[threadIdx.x] = v * scale; __syncthreads(); return s[0]; }\n",
                                  "float scale = p[2]; p[1] = h(p, scale);", "h uses scale, which names a variable"),
    "recursion": ("__device__ float h(float* s, float v) { __syncthreads(); float r = h(s, v - 1.0f); return r; }\n",
                  "p[1] = h(p, p[0]);", "h calls itself"),
    "a __shared__ variable": ("__device__ float h(float* s, float v) { __shared__ float t[64]; t[threadIdx.x] = v; "
                              "__syncthreads(); return t[0]; }\n", "p[1] = h(p, p[0]);", "h has a __shared__ variable"),
    "a call in a call's arguments": (HELPER, "p[1] = h(p, h(p, p[0]));", "a call of h in another one's arguments"),
}


CASES = sorted(REFUSED)


def _numbered(text, i):
    """text with the helper h and the kernel k named for case i (one file holds every case)."""
    return re.sub(r"\bh\b", f"h{i}", text)


@pytest.fixture(scope="module")
def refused():
    """Every case in one file (one parse): its transformation, and why each kernel's calls are not written in."""
    import clang.cindex as ci
    source = "".join(f"{_numbered(REFUSED[case][0], i)}__global__ void k{i}(float* p) {{\n    "
                     f"{_numbered(REFUSED[case][1], i)}\n}}\n" for i, case in enumerate(CASES))
    text = rewrite(source, "k.cu")
    t = coroutines.transform(text, "k.cu")
    functions = coroutines._functions(coroutines.parse(text, "k.cu"), coroutines.PARSED + "k.cu", ci.CursorKind)
    copies = Copies(text, "k.cu", set(t.functions))
    return t, {f.cursor.spelling: split_inline.why_not(copies, functions, set(t.functions), f)
               for f in functions if f.kernel}


@pytest.mark.parametrize("case", CASES)
def test_a_call_that_cannot_be_written_in_as_the_same_program_keeps_the_scheduler(refused, case):
    t, why_not = refused
    i = CASES.index(case)
    assert f"k{i}" in t.kernels and f"k{i}" not in t.split
    said, why = why_not[f"k{i}"], _numbered(REFUSED[case][2], i)
    assert said is not None and why in said, said
