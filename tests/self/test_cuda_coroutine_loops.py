"""The loops of a coroutine copy that never wait run on the stack (grader/cuda/coroutine_loops.py): which loops and
which variables, and that a kernel gives the same both ways with them, in both thread orders."""

import ctypes

import numpy as np
import pytest

from grader.cuda import build as cuda_build, coroutines
from grader.cuda.coroutine_loops import OWN
from grader.cuda.rewrite import rewrite
from grader.sandbox import runtime_words

F32P = ctypes.POINTER(ctypes.c_float)

# Loops of every form beside barriers; out[t * 8 + k] is what thread t computed in its k-th way.
LOOPS = """\
#define TWICE(x) ((x) + (x))
__device__ void bump(int& v) { v += 1; }
__global__ void loops(float* out, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    float* o = out + (blockIdx.x * blockDim.x + t) * 8;
    s[t] = t;
    __syncthreads();
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) sum += s[(t + k) % 64];           // an accumulator, copied in and back
    o[0] = sum;
    int steps = 0;
    while (steps < 100) { if (steps * steps > t) break; ++steps; }  // a break, and the counter read after
    o[1] = steps;
    int down = t;
    do --down; while (down > t / 2);                                 // do-while, no braces
    o[2] = down;
    float kept = 1.0f;
    float* through = &kept;                                          // its address is taken: used in place
    for (int k = 0; k < 3; ++k) { *through *= 2.0f; kept += 1.0f; }
    o[3] = kept;
    int bumped = 0;
    for (int k = 0; k < 4; ++k) bump(bumped);                        // a non-const reference parameter: in place
    o[4] = bumped;
    const int limit = t % 5;
    float tw = 0.0f;
    for (int k = 0; k < limit; ++k) tw += TWICE(1.0f);               // a const one is copied in only
    o[5] = tw;
    float total = 0.0f;
    for (int r = 0; r < 2; ++r) {                                    // waits: left as it is, its inner loop not
        for (int k = 0; k < 4; ++k) total += s[(t + k + r) % 64];
        __syncthreads();
        s[t] = s[t] + 1.0f;
        __syncthreads();
    }
    o[6] = total;
}
extern "C" void run(float* out, int blocks, int n) { loops<<<blocks, 64>>>(out, n); cudaDeviceSynchronize(); }
"""


def _expected(blocks, n):
    t = np.arange(64)
    out = np.zeros((blocks, 64, 8), np.float32)
    out[..., 0] = [sum((i + k) % 64 for k in range(n)) for i in t]
    out[..., 1] = [next(st for st in range(101) if st * st > i or st == 100) for i in t]
    down = []
    for i in t:
        d = i - 1
        while d > i // 2:
            d -= 1
        down.append(d)
    out[..., 2] = down
    out[..., 3] = ((1 * 2 + 1) * 2 + 1) * 2 + 1
    out[..., 4] = 4
    out[..., 5] = 2.0 * (t % 5)
    out[..., 6] = [sum((i + k) % 64 for k in range(4)) + sum(((i + k + 1) % 64) + 1 for k in range(4)) for i in t]
    return out


def test_a_loop_that_does_not_wait_runs_on_the_stack_with_copies_of_what_only_its_name_reaches():
    made = coroutines.transform(rewrite(LOOPS, "loops.cu"), "loops.cu")
    copy = made.text[made.text.index("cuda_cpu::co::Kernel loops"):]
    assert copy.count("[&]() -> void {") == 7  # every loop but the one that waits (its inner loop is one)
    assert f"auto {OWN}sum = sum;" in copy and f"sum = {OWN}sum;" in copy
    assert f"auto {OWN}steps = steps;" in copy and f"steps = {OWN}steps;" in copy
    assert f"auto {OWN}limit = limit;" in copy and f"limit = {OWN}limit;" not in copy  # const: in, not back
    assert f"auto& {OWN}s = s;" in copy  # the shared array's reference, bound anew
    for reached in ("kept", "bumped", "through"):  # `through` is copied: it is what reaches `kept`, not reached
        assert (f"{OWN}{reached}" in copy) == (reached == "through"), reached
    waiting_loop = copy[copy.index("for (int r = 0"):]
    assert waiting_loop.startswith("for (int r = 0; r < 2; ++r) {")  # the loop that waits is not wrapped
    assert f"auto {OWN}total = total;" in waiting_loop  # its inner loop is


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_a_kernel_with_such_loops_gives_the_same_both_ways(tmp_path, monkeypatch, order):
    path = tmp_path / "loops.cu"
    path.write_text(LOOPS)
    results = {}
    for way in ("fibers", "coroutines"):
        monkeypatch.setenv("CUDA_CPU_THREADS", way)
        monkeypatch.setenv("CUDA_CPU_ORDER", order)
        lib = ctypes.CDLL(str(cuda_build.build(path)))
        lib.cuda_cpu_launch_error.restype = lib.cuda_cpu_threads.restype = ctypes.c_char_p
        lib.cuda_cpu_begin_call()
        out = np.zeros((3, 64, 8), np.float32)
        lib.run(out.ctypes.data_as(F32P), 3, 7)
        assert lib.cuda_cpu_launch_error() == b""
        assert runtime_words.english(lib.cuda_cpu_threads().decode()).strip() == \
            f"loops: its threads ran {'on fibers' if way == 'fibers' else 'as coroutines'} (CUDA_CPU_THREADS={way})"
        results[way] = out
    expected = _expected(3, 7)
    for way, out in results.items():
        assert np.array_equal(out, expected), (way, np.argwhere(out != expected)[:5])


def test_a_loop_a_macro_wrote_is_left_as_it_is():
    source = ("#define EACH(k, n) for (int k = 0; k < n; ++k)\n"
              "__global__ void k(float* x, int n) { float a = 0; EACH(i, n) a += x[i]; __syncthreads(); x[0] = a; }\n")
    made = coroutines.transform(rewrite(source, "k.cu"), "k.cu")
    assert "[&]() -> void" not in made.text
