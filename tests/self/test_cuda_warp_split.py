"""Split copies at shuffles (grader/cuda/split_shuffles.py; the runtime's WarpSplit in
include/cuda_cpu/detail/split.h): a kernel without barriers whose shuffles every lane of a warp reaches together runs
each warp in turn as loops over its lanes, cut at each shuffle. It gives what it gives on fibers and as coroutines,
in both thread orders, at block sizes with a partial warp and in two dimensions: the same values, and the same race
where one warp reads what another has not written yet."""

import ctypes

import numpy as np
import pytest

from grader.cuda import build as cuda_build
from grader.sandbox import runtime_words
from split_helpers import built, transformed, why_not_split_each

F32P = ctypes.POINTER(ctypes.c_float)

KERNELS = """\
// a warp's sum by halves: a loop of shuffles without braces
__global__ void warp_sum(const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffff, v, offset);
    out[i] = v;
}
// butterflies, a broadcast within 8 lanes, an up shuffle of an int, a double, a uniform mask in a variable
__global__ void mix(const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned full = 0xffffffffu;
    float v = in[i];
    v += __shfl_xor_sync(full, v, 1);
    float w = __shfl_xor_sync(full, v, 2) * 2.0f;
    int lane = threadIdx.x % 32;
    int up = __shfl_up_sync(full, lane * 3, 5);
    double d = __shfl_sync(full, (double)v, 3, 8);
    out[i] = v + w + up + (float)d;
}
// no wait between one warp's store and another warp's read: which warp runs first shows (a race)
__global__ void cross_warp(const float* in, float* out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    float v = s[(t + 32) % blockDim.x];
    for (int k = 1; k < 32; k *= 2) {
        v = v + __shfl_xor_sync(0xffffffff, v, k);
    }
    out[blockIdx.x * blockDim.x + t] = v;
}
// a two-dimensional block: lanes count along x, then y
__global__ void tiles(const float* in, float* out) {
    int t = threadIdx.y * blockDim.x + threadIdx.x, i = blockIdx.x * blockDim.x * blockDim.y + t;
    float v = in[i] * (threadIdx.y + 1);
    v = __shfl_sync(0xffffffff, v, (t * 7) % 32);
    out[i] = v + __shfl_down_sync(0xffffffff, v, 3);
}
extern "C" int run(int which, const float* in, float* out, int blocks, int threads) {
    if (which == 0) warp_sum<<<blocks, threads>>>(in, out);
    if (which == 1) mix<<<blocks, threads>>>(in, out);
    if (which == 2) cross_warp<<<blocks, threads>>>(in, out);
    if (which == 3) tiles<<<blocks, dim3(8, threads / 8)>>>(in, out);
    return cudaDeviceSynchronize();
}
"""
NAMES = ("warp_sum", "mix", "cross_warp", "tiles")


def test_each_kernel_whose_lanes_reach_its_shuffles_together_gets_a_split_copy():
    assert transformed(KERNELS).split == tuple(sorted(NAMES))


REFUSED = {
    "a shuffle inside an if": ("if (p[0] > 0) { p[1] = __shfl_sync(0xffffffffu, p[1], 0); }",
                               "a shuffle inside a if_stmt"),
    "a shuffle in a condition": ("p[1] = p[0] > 0 ? __shfl_sync(0xffffffffu, p[1], 0) : 0.0f;",
                                 "a shuffle inside a conditional_operator"),
    "a mask by lane": ("p[1] = __shfl_sync(threadIdx.x < 16 ? 0xffffu : 0xffff0000u, p[1], 0);",
                       "a shuffle whose mask may differ by lane"),
    "an argument that assigns": ("float x = p[0]; p[1] = __shfl_sync(0xffffffffu, x++, 0);",
                                 "a shuffle whose arguments do more than read"),
    "a loop bound by lane": ("for (int k = 0; k < threadIdx.x; ++k) { p[1] += __shfl_sync(0xffffffffu, p[1], 0); }",
                             "a loop around a shuffle whose head may differ by thread"),
    "a return": ("if (p[0] > 0) return; p[1] = __shfl_sync(0xffffffffu, p[1], 0);",
                 "a return in a kernel split at its shuffles"),
    "a barrier too": ("p[0] = __shfl_sync(0xffffffffu, p[0], 0); __syncthreads();",
                      "it waits at barriers and at shuffles"),
    "a vote": ("p[0] = __ballot_sync(0xffffffffu, p[0] > 0);", "it waits other than at"),
}


@pytest.fixture(scope="module")
def refused():
    return why_not_split_each({case: body for case, (body, _why) in REFUSED.items()})


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_kernel_whose_shuffles_may_diverge_keeps_the_scheduler(refused, case):
    said, split = refused[case]
    assert said is not None and REFUSED[case][1] in said, said
    assert not split


def _run(tmp_path, monkeypatch, way, order, which, threads, blocks=3):
    lib = built(tmp_path, monkeypatch, KERNELS, way, order)
    data = np.random.default_rng(which).standard_normal(blocks * threads).astype(np.float32)
    out = np.zeros(blocks * threads, np.float32)
    assert lib.run(which, data.ctypes.data_as(F32P), out.ctypes.data_as(F32P), blocks, threads) == 0
    assert lib.cuda_cpu_launch_error() == b""
    return out, runtime_words.english(lib.cuda_cpu_threads().decode()).strip()


@pytest.mark.parametrize("which", range(len(NAMES)), ids=NAMES)
def test_a_kernel_split_at_its_shuffles_gives_what_it_gives_on_fibers_in_either_order(tmp_path, monkeypatch, which):
    for threads in (64, 48, 200):
        outs = {}
        for order in ("forward", "reverse"):
            split, said = _run(tmp_path, monkeypatch, None, order, which, threads)
            assert said == f"{NAMES[which]}: its threads ran as loops between its shuffles, one warp after another " \
                           f"(its split copy: every lane of a warp reaches each shuffle together)"
            for way in ("fibers", "coroutines"):
                other, _said = _run(tmp_path, monkeypatch, way, order, which, threads)
                assert np.array_equal(split, other, equal_nan=True), (way, order, threads,
                                                                      np.argwhere(split != other)[:5])
            outs[order] = split
        # the race shows as it does on fibers: the two orders read different values
        assert np.array_equal(outs["forward"], outs["reverse"], equal_nan=True) == (NAMES[which] != "cross_warp")


def test_a_warp_sum_adds_its_lanes(tmp_path):
    """Not only alike on every path: lane 0 of each warp holds its warp's sum (lanes past the block's end add
    nothing: a source lane the warp lacks gives the caller its own value, as on a GPU)."""
    path = tmp_path / "sum.cu"
    path.write_text(KERNELS)
    lib = ctypes.CDLL(str(cuda_build.build(path)))
    data = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    assert lib.run(0, data.ctypes.data_as(F32P), out.ctypes.data_as(F32P), 1, 64) == 0
    assert out[0] == data[:32].sum() and out[32] == data[32:].sum()


def test_a_split_copy_at_shuffles_keeps_the_kernel_s_lines():
    text = transformed(KERNELS).text
    copy = text[text.index("mix(cuda_cpu::WarpSplit&"):]
    copy = copy[:copy.index("\n}\n")]
    assert '#line 19 "k.cu"\nout[i] = v + w + up + (float)d;' in copy
