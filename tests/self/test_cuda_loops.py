"""Blocks run as one loop over their threads (csrc/cuda_cpu/src/loop.cpp; the loop itself is launch.h's
loop_over_threads, in the kernel's library): each thread sees its own coordinates in both thread orders, and a
thread that waits after all (a kernel the build wrote no coroutine copy for: GRADER_CUDA_THREADS=fibers) ends the
loop where it is, the scheduler going on from there with the same results and the same reports."""

import ctypes

import numpy as np
import pytest

from grader.cuda import build as cuda_build
from grader.sandbox import runtime_words
from test_cuda_coroutines import WAITS, _expected
from test_cuda_cpu import DIAGNOSES, assert_diagnosed, diagnosed_worker

U32P = ctypes.POINTER(ctypes.c_uint32)
F32P = ctypes.POINTER(ctypes.c_float)

# Each thread writes its coordinates; threads 37 and up of each block also ask which lanes of their warp are still
# running (__activemask(), which the runtime answers from the threads' states: the loop has to hand them over).
COORDINATES = """\
__global__ void where(unsigned* out, unsigned* masks) {
    unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned n = blockDim.x * blockDim.y * blockDim.z;
    unsigned* o = out + (b * n + t) * 6;
    o[0] = threadIdx.x; o[1] = threadIdx.y; o[2] = threadIdx.z;
    o[3] = blockIdx.x; o[4] = blockIdx.y; o[5] = blockIdx.z;
    if (t < 37) return;
    masks[b * n + t] = __activemask();
}
extern "C" int run(unsigned* out, unsigned* masks) {
    where<<<dim3(3, 2, 2), dim3(4, 4, 4)>>>(out, masks);
    return cudaDeviceSynchronize();
}
"""


def _library(tmp_path, name, source):
    path = tmp_path / name
    path.write_text(source)
    lib = ctypes.CDLL(str(cuda_build.build(path)))
    lib.cuda_cpu_launch_error.restype = ctypes.c_char_p
    lib.cuda_cpu_begin_call()
    return lib


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_each_thread_of_a_loop_sees_its_own_coordinates_and_the_lanes_that_have_ended(tmp_path, monkeypatch, order):
    monkeypatch.setenv("CUDA_CPU_ORDER", order)
    lib = _library(tmp_path, "where.cu", COORDINATES)
    blocks, threads = 12, 64
    out = np.zeros((blocks, threads, 6), np.uint32)
    masks = np.zeros((blocks, threads), np.uint32)
    assert lib.run(out.ctypes.data_as(U32P), masks.ctypes.data_as(U32P)) == 0, lib.cuda_cpu_launch_error()
    t, b = np.arange(threads), np.arange(blocks)
    expected = np.zeros_like(out)
    expected[..., 0], expected[..., 1], expected[..., 2] = t % 4, t // 4 % 4, t // 16
    expected[..., 3], expected[..., 4], expected[..., 5] = (b % 3)[:, None], (b // 3 % 2)[:, None], (b // 6)[:, None]
    assert np.array_equal(out, expected), np.argwhere(out != expected)[:5]
    # Warp 1 (threads 32-63): the threads that ran before thread t have ended (those below 37 without asking).
    lane = t[37:] - 32
    ended_before = (1 << lane) - 1 if order == "forward" else ~((1 << (lane + 1)) - 1) & 0xFFFFFFFF
    expected_masks = np.broadcast_to((~ended_before & 0xFFFFFFFF).astype(np.uint32), (blocks, threads - 37))
    assert np.array_equal(masks[:, 37:], expected_masks), (masks[0, 37:], expected_masks[0])


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_a_kernel_that_waits_without_a_copy_leaves_its_loop_and_gives_the_same(tmp_path, monkeypatch, order):
    monkeypatch.setenv("GRADER_CUDA_THREADS", "fibers")
    monkeypatch.setenv("CUDA_CPU_ORDER", order)
    lib = _library(tmp_path, "waits.cu", WAITS)
    lib.cuda_cpu_threads.restype = ctypes.c_char_p
    out = np.zeros((6, 64, 16), np.float32)
    lib.run(out.ctypes.data_as(F32P), 6, 50)
    assert lib.cuda_cpu_launch_error() == b""
    expected = _expected(6)
    assert np.array_equal(out, expected), np.argwhere(out != expected)[:5]
    assert runtime_words.english(lib.cuda_cpu_threads().decode()).strip() == ""  # no copy: nothing was chosen


@pytest.fixture(scope="module")
def diagnosed_from_a_loop(tmp_path_factory):
    """test_cuda_cpu.py's DIAGNOSED kernel built without copies: each block starts as a loop."""
    yield from diagnosed_worker(tmp_path_factory, GRADER_CUDA_THREADS="fibers")


@pytest.mark.parametrize("mode,message", DIAGNOSES, ids=[f"mode{m}" for m, _ in DIAGNOSES])
def test_a_bad_access_in_a_loop_is_named_as_on_a_fiber(diagnosed_from_a_loop, mode, message):
    assert_diagnosed(diagnosed_from_a_loop, mode, message)


def test_threads_that_return_before_a_barrier_from_a_loop_are_reported(diagnosed_from_a_loop):
    x = np.arange(6 * 64, dtype=np.float32).reshape(6, 1, 64)
    assert np.isnan(diagnosed_from_a_loop.call("causal_attention_forward", x, x, x).reshape(-1)[:16]).all()
    assert "16 of 32 threads (thread (16,0,0) first) had returned before the __syncthreads() on line 14" in \
        diagnosed_from_a_loop.warnings
