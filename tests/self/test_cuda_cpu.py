"""The CPU runtime for CUDA kernels (csrc/cuda_cpu): the rewrite, the ninja build and cache, barriers, warp
collectives, atomics, shared memory, divergence, and both reference kernels against the float64 oracle."""

import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

from grader.cuda import build as cuda_build, nvcc
from grader.cuda import rewrite as cuda_rewrite
from grader.judge import oracle
from helpers import ROOT

REFERENCE = ROOT / "solutions" / "microgpt_cuda.cu"
F32P = ctypes.POINTER(ctypes.c_float)


def build_and_load(tmp_path, source, name="kernel.cu"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    lib = ctypes.CDLL(str(cuda_build.build(path)))
    lib.cuda_cpu_launch_error.restype = ctypes.c_char_p
    return lib


def ptr(a):
    return a.ctypes.data_as(F32P)


def run_entry(tmp_path, source, name, Q, O, BH, T, d_k):
    """Build a file whose causal_attention_forward launches the kernel under test, run it on Q (as Q, K and V)
    into O, and check that no launch failed."""
    lib = build_and_load(tmp_path, source, name)
    lib.causal_attention_forward(ptr(Q), ptr(Q), ptr(Q), ptr(O), BH, T, d_k)
    assert lib.cuda_cpu_launch_error() == b""


def test_rewrite_keeps_lines_and_handles_launch_forms():
    src = ("k<<<g, b>>>(x, y);\n"
           "tiled<64><<<dim3(4, 2),\n    64, 0, 0>>>(x);\n"
           "go<<<1, 1>>>();\n"
           "    __shared__ float tile[64][65];\n"
           "    extern __shared__ float dyn[];\n"
           "    __shared__ int count;\n")
    out = cuda_rewrite.rewrite(src, "s.cu").splitlines()
    assert out[0] == '#line 1 "s.cu"' and len(out) == 1 + src.count("\n")
    assert out[1] == "cuda_cpu::launch(CUDA_CPU_KERNEL(k), cuda_cpu::config(g, b).named(CUDA_CPU_NAME(k)), x, y);"
    # a launch spread over two lines stays on two lines, so every later line keeps its number
    assert out[2] == ("cuda_cpu::launch(CUDA_CPU_KERNEL(tiled<64>), cuda_cpu::config(dim3(4, 2), 64, 0, 0)"
                      ".named(CUDA_CPU_NAME(tiled<64>)), ") and out[3] == "x);"
    assert out[4] == "cuda_cpu::launch(CUDA_CPU_KERNEL(go), cuda_cpu::config(1, 1).named(CUDA_CPU_NAME(go)));"
    assert out[5].strip() == 'auto& tile = cuda_cpu::shared_var<float[64][65]>([] { static const char site = 0; return &site; }(), "tile", __LINE__);'
    assert out[6].strip() == 'float* dyn = cuda_cpu::dynamic_shared<float>("dyn");'
    assert out[7].strip() == 'auto& count = cuda_cpu::shared_var<int>([] { static const char site = 0; return &site; }(), "count", __LINE__);'


@pytest.mark.parametrize("declaration", ["static __shared__ float partial[32];", "__shared__ static float partial[32];",
                                         "static __shared__ __align__(16) float partial[32];",
                                         "__shared__ __align__(16) static float partial[32];"])
def test_rewrite_drops_static_from_a_shared_declaration(declaration):
    """A `static` kept would make the reference a function-local static, bound to the first block's array for good
    (tests/cuda_conformance/static_shared_reduction.cu runs the effect)."""
    out = cuda_rewrite.rewrite(f"    {declaration}\n", "s.cu").splitlines()[1].strip()
    assert out == ('auto& partial = cuda_cpu::shared_var<float[32]>([] { static const char site = 0; return &site; }(), '
                   '"partial", __LINE__);')


def test_rewrite_names_the_kernel_of_each_opt_in_as_its_launch_names_it():
    src = ("cudaFuncSetAttribute(flash<64, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);\n"
           "cudaFuncSetAttribute((const void*)k, cudaFuncAttributeMaxDynamicSharedMemorySize, 1);\n"
           "cudaFuncSetAttribute(reinterpret_cast<const void*>(&ns::k), cudaFuncAttributeMaxDynamicSharedMemorySize, 1);\n"
           "// cudaFuncSetAttribute(not_code, 1, 2);\n"
           "flash<64, 2><<<4, 128, 65536>>>(a);\n")
    out = cuda_rewrite.rewrite(src, "s.cu").splitlines()
    assert out[1] == ("cuda_cpu::func_set_attribute_named(CUDA_CPU_NAME(flash<64, 2>), flash<64, 2>, "
                      "cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);")
    assert out[2].startswith("cuda_cpu::func_set_attribute_named(CUDA_CPU_NAME(k), (const void*)k,")
    assert out[3].startswith("cuda_cpu::func_set_attribute_named(CUDA_CPU_NAME(ns::k), reinterpret_cast")
    assert out[4] == "// cudaFuncSetAttribute(not_code, 1, 2);"
    assert ".named(CUDA_CPU_NAME(flash<64, 2>))" in out[5]


MACRO_LAUNCH = r"""
#include <cstdio>
template <class T, int N>
__global__ void fill(T* out) { extern __shared__ T tile[]; tile[threadIdx.x] = N; out[threadIdx.x] = tile[threadIdx.x]; }
#define OPT_IN(K, BYTES) cudaFuncSetAttribute(K, cudaFuncAttributeMaxDynamicSharedMemorySize, BYTES)
#define LAUNCH(T, N, out, bytes) \
    fill<T, \
         N><<<1, \
              32, bytes>>>(out)
int main() {
    float* out;
    cudaMalloc(&out, 32 * sizeof(float));
    LAUNCH(float, 7, out, 65536);
    printf("%s at line %d\n", cudaGetErrorName(cudaGetLastError()), __LINE__);
    OPT_IN((fill<float, 7>), 65536);
    LAUNCH(float, 7, out, 65536);
    float got = 0;
    cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost);
    printf("%s, %g at line %d\n", cudaGetErrorName(cudaGetLastError()), got, __LINE__);
    return 0;
}
"""


def test_a_launch_in_a_continued_macro_keeps_the_macro_its_lines_and_its_kernel_s_name(tmp_path):
    """Template arguments and the launch's configuration across continued lines; the kernel's name, made a string
    after the macro's parameters are replaced, matches the opt-in made through another macro."""
    (tmp_path / "macro.cu").write_text(MACRO_LAUNCH)
    out = cuda_rewrite.rewrite(MACRO_LAUNCH, "macro.cu")
    assert out.count("\n") == MACRO_LAUNCH.count("\n") + 1  # the #line directive
    program = cuda_build.build_program(tmp_path, ["macro.cu"])
    done = subprocess.run([str(program)], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == ["cudaErrorInvalidValue at line 14", "cudaSuccess, 7 at line 19"], \
        done.stdout + done.stderr


def test_compile_errors_name_the_students_file_and_line(tmp_path):
    with pytest.raises(cuda_build.BuildError, match=r"broken.cu:2:\d+: error: expected ‘;’"):
        build_and_load(tmp_path, "__global__ void k(float* x) {\n    x[0] = 1.0f\n}\n", name="broken.cu")


def test_unchanged_source_is_not_rebuilt(tmp_path):
    (tmp_path / "k.cu").write_text('extern "C" void f() {}\n')
    first = cuda_build.build(tmp_path / "k.cu")
    mtime = first.stat().st_mtime_ns
    assert cuda_build.build(tmp_path / "k.cu") == first and first.stat().st_mtime_ns == mtime


def test_kernels_read_the_runtime_header_precompiled_and_build_without_a_pch_that_does_not_fit(tmp_path,
                                                                                             monkeypatch):
    """cuda_cpu.h precompiled beside the runtime's objects is what a CUDA compile includes; a .gch that GCC
    cannot use (here: not a PCH at all) is passed over for the header itself, and the kernel still builds and
    runs right."""
    runtime = cuda_build.runtime_objects()[0].parent
    assert (runtime / cuda_build.PCH).stat().st_size > 0 and (runtime / "cuda_cpu.h").resolve().is_file()
    (tmp_path / "k.cu").write_text(BLOCK_SUM.replace("BARRIER", "__syncthreads();") + f"// {tmp_path}\n")
    built = cuda_build.build(tmp_path / "k.cu")
    assert f"-include {runtime / 'cuda_cpu.h'} " in (built.parent / "build.ninja").read_text()
    unfit = tmp_path / "cache" / runtime.name  # a copy of the runtime's folder whose .gch is not one
    shutil.copytree(runtime, unfit, ignore=shutil.ignore_patterns(".lock"))
    (unfit / cuda_build.PCH).write_bytes(b"not a precompiled header")
    monkeypatch.setattr(cuda_build, "CACHE", tmp_path / "cache")
    (tmp_path / "k.cu").write_text(BLOCK_SUM.replace("BARRIER", "__syncthreads();") + f"// {tmp_path} again\n")
    lib = ctypes.CDLL(str(cuda_build.build(tmp_path / "k.cu")))
    x = np.arange(512, dtype=np.float32)
    out = np.zeros(2, np.float32)
    lib.run(ptr(x), ptr(out), 2)
    assert out.tolist() == [x[:256].sum(), x[256:].sum()]


BLOCK_SUM = """
    __global__ void block_sum(const float* x, float* out) {
        __shared__ float buf[256];
        int i = threadIdx.x;
        buf[i] = x[blockIdx.x * 256 + i];
        __syncthreads();
        for (int s = 128; s > 0; s >>= 1) {
            if (i < s) buf[i] += buf[i + s];
            BARRIER
        }
        if (i == 0) out[blockIdx.x] = buf[0];
    }
    extern "C" void run(const float* x, float* out, int blocks) { block_sum<<<blocks, 256>>>(x, out); }
"""


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_barriers_make_a_reduction_right_in_any_thread_order(tmp_path, monkeypatch, order):
    monkeypatch.setenv("CUDA_CPU_ORDER", order)
    lib = build_and_load(tmp_path, BLOCK_SUM.replace("BARRIER", "__syncthreads();"))
    x = np.arange(8 * 256, dtype=np.float32)
    out = np.zeros(8, np.float32)
    lib.run(ptr(x), ptr(out), 8)
    assert np.array_equal(out, x.reshape(8, 256).sum(axis=1)) and lib.cuda_cpu_launch_error() == b""


PARTIAL_WARPS = """
    __global__ void sums(const int* in, int* out) {
        __shared__ int s[128];
        unsigned t = threadIdx.x, n = blockDim.x;
        s[t] = in[blockIdx.x * n + t];
        __syncthreads();
        if (t == 0) {
            int acc = 0;
            for (unsigned i = 0; i < n; ++i) acc += s[i];
            out[blockIdx.x] = acc;
        }
        __syncthreads();
        int v = s[t];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(__activemask(), v, o);
        if ((t & 31) == 0) out[gridDim.x + blockIdx.x * 4 + t / 32] = v;
    }
    extern "C" void run(const int* in, int* out, int blocks, int threads) { sums<<<blocks, threads>>>(in, out); }
"""


@pytest.mark.parametrize("order", ["forward", "reverse"])
@pytest.mark.parametrize("threads", [1, 33, 40, 100])
def test_a_block_whose_last_warp_is_partial_runs_right_in_any_thread_order(tmp_path, monkeypatch, order, threads):
    """In reverse order the partial warp runs first: every thread must still run once per round (a packed run
    order once ran lanes of the wrong warps)."""
    monkeypatch.setenv("CUDA_CPU_ORDER", order)
    lib = build_and_load(tmp_path, PARTIAL_WARPS)
    blocks = 3
    x = np.arange(blocks * threads, dtype=np.int32) + 1
    out = np.full(blocks * 5, -7, np.int32)
    lib.run(x.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p), blocks, threads)
    assert lib.cuda_cpu_launch_error() == b""
    per_block = x.reshape(blocks, threads)
    assert np.array_equal(out[:blocks], per_block.sum(axis=1))
    for b in range(blocks):  # each warp's xor-reduction over its live lanes (an exited lane gives its caller's own)
        for w in range((threads + 31) // 32):
            lanes = per_block[b, w * 32:(w + 1) * 32]
            if len(lanes) == 32:
                assert out[blocks + b * 4 + w] == lanes.sum()


def test_a_missing_barrier_changes_the_result_with_the_thread_order(tmp_path, monkeypatch):
    x = np.arange(4 * 256, dtype=np.float32)
    results = []
    for order in ("forward", "reverse"):
        monkeypatch.setenv("CUDA_CPU_ORDER", order)
        lib = build_and_load(tmp_path, BLOCK_SUM.replace("BARRIER", ""))
        out = np.zeros(4, np.float32)
        lib.run(ptr(x), ptr(out), 4)
        results.append(out)
    assert not np.array_equal(results[0], results[1])  # the race the reordered rerun exposes


def test_divergent_barriers_are_reported_with_their_lines(tmp_path):
    lib = build_and_load(tmp_path, """
        __global__ void k(float* x) {
            if (threadIdx.x < 16) {
                __syncthreads();
            } else {
                __syncthreads();
            }
            x[threadIdx.x] = 1.0f;
        }
        extern "C" void run(float* x) { k<<<1, 32>>>(x); }
    """)
    x = np.zeros(32, np.float32)
    lib.run(ptr(x))
    from grader.sandbox import runtime_words
    msg = runtime_words.english(lib.cuda_cpu_launch_error().decode())  # said() messages (csrc/cuda_cpu/src/words.cpp)
    assert "different barriers" in msg and "line 4" in msg and "line 6" in msg


def test_early_return_counts_as_arriving_and_shared_memory_starts_as_nan(tmp_path):
    lib = build_and_load(tmp_path, """
        __global__ void k(float* out) {
            __shared__ float s[64];
            out[64 + threadIdx.x] = s[threadIdx.x];  // read before any write: NaN, never a stale value
            if (threadIdx.x >= 32) return;
            s[threadIdx.x] = threadIdx.x;
            __syncthreads();
            out[threadIdx.x] = s[31 - threadIdx.x];
        }
        extern "C" void run(float* out) { k<<<1, 64>>>(out); }
    """)
    out = np.zeros(128, np.float32)
    lib.run(ptr(out))
    assert np.array_equal(out[:32], np.arange(31, -1, -1)) and np.isnan(out[64:]).all()
    assert lib.cuda_cpu_launch_error() == b""


_REUSE = """
    #include <sys/resource.h>
    __global__ void fill(float* p, int n) { for (int i = threadIdx.x; i < n; i += blockDim.x) p[i] = 1.0f; }
    static long faults() { rusage u; getrusage(RUSAGE_SELF, &u); return u.ru_minflt; }
    extern "C" void run(float* seen, long* counts, int n) {
        float *a, *b;
        long f0 = faults();
        cudaMalloc(&a, n * sizeof(float));
        fill<<<1, 256>>>(a, n);
        long f1 = faults();
        cudaFree(a);
        cudaMalloc(&b, n * sizeof(float));
        cudaMemcpy(seen, b, n * sizeof(float), cudaMemcpyDeviceToHost);  // before anything is written
        fill<<<1, 256>>>(b, n);
        long f2 = faults();
        counts[0] = f1 - f0, counts[1] = f2 - f1, counts[2] = a != b;
        cudaFree(b);
    }
"""
_RUN_REUSE = """
import ctypes, sys
import numpy as np
lib = ctypes.CDLL(sys.argv[1])
lib.cuda_cpu_launch_error.restype = ctypes.c_char_p
n = 16 << 20  # 64 MiB: 16384 pages of 4 KiB
seen = np.full(n, 2.0, np.float32)  # its own pages are in before the count starts
counts = np.zeros(3, np.int64)
lib.run(seen.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), counts.ctypes.data_as(ctypes.POINTER(ctypes.c_long)), n)
print(*counts, int(np.isnan(seen).all()), lib.cuda_cpu_launch_error().decode() or "-")
"""


@pytest.mark.parametrize("keep", ["512", "0"])
def test_a_freed_buffer_s_pages_go_to_the_next_of_its_size_poisoned(tmp_path, keep):
    """cudaFree keeps a buffer's pages and the next cudaMalloc of its size gets them (memory.cpp): no page faults
    there, and it starts as NaN like every new buffer, never with the freed one's values. Its address is new: the
    freed range stays in quarantine (the bad-access tests check that it faults, named). CUDA_CPU_KEEP_FREED=0
    (GRADER_HEAP=lean) gives freed pages back at once: the next buffer faults its own in."""
    path = tmp_path / "reuse.cu"
    path.write_text(textwrap.dedent(_REUSE))
    library = cuda_build.build(path)
    done = subprocess.run([sys.executable, "-c", _RUN_REUSE, str(library)], capture_output=True, text=True,
                          env={**os.environ, "CUDA_CPU_KEEP_FREED": keep}, check=True)
    first, second, moved, all_nan, error = done.stdout.split()
    first, second = int(first), int(second)
    assert error == "-" and moved == "1" and all_nan == "1", done.stdout
    assert first >= 16, first  # fresh pages fault in, at least one per 2 MiB huge page
    if keep == "0":
        assert second >= first // 2, (first, second)
    else:
        assert second <= first // 8, (first, second)


def test_warp_shuffles_and_atomics(tmp_path):
    lib = build_and_load(tmp_path, """
        __global__ void k(float* out, int* counter) {
            int lane = threadIdx.x % 32;
            float v = lane;
            float total = v;
            for (int o = 16; o > 0; o >>= 1) total += __shfl_xor_sync(0xffffffff, total, o);
            float down = __shfl_down_sync(0xffffffff, v, 1);
            float up = __shfl_up_sync(0xffffffff, v, 1, 16);
            float bcast = __shfl_sync(0xffffffff, v, 5);
            int w = threadIdx.x / 32;
            if (w == 0) {  // only warp 0 reduces: its lanes meet without the other warps
                float half = __shfl_xor_sync(0xffffffff, v, 16);
                out[128 + lane] = half;
            }
            out[lane + 32 * 0] = total;
            if (w == 1) { out[32 + lane] = down; out[64 + lane] = up; out[96 + lane] = bcast; }
            atomicAdd(counter, 1);
        }
        extern "C" void run(float* out, int* counter) { k<<<3, 64>>>(out, counter); }
    """)
    out = np.zeros(160, np.float32)
    counter = np.zeros(1, np.int32)
    lib.run(ptr(out), counter.ctypes.data_as(ctypes.POINTER(ctypes.c_int)))
    lanes = np.arange(32, dtype=np.float32)
    assert np.array_equal(out[:32], np.full(32, lanes.sum()))
    assert np.array_equal(out[32:64], np.append(lanes[1:], 31))  # the last lane keeps its own value
    assert np.array_equal(out[64:96], np.where(lanes % 16 == 0, lanes, lanes - 1))  # width 16 segments
    assert np.array_equal(out[96:128], np.full(32, 5.0))
    assert np.array_equal(out[128:160], (lanes + 16) % 32)
    assert counter[0] == 3 * 64 and lib.cuda_cpu_launch_error() == b""


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("BH,T,d_k", [(2, 1, 64), (2, 2, 64), (3, 17, 64), (2, 33, 16), (1, 1023, 64)])
def test_reference_kernels_match_the_oracle(version, BH, T, d_k):
    lib = ctypes.CDLL(str(cuda_build.build(REFERENCE, defines=[f"MICROGPT_VERSION={version}"])))
    lib.cuda_cpu_launch_error.restype = ctypes.c_char_p
    rng = np.random.default_rng([version, BH, T, d_k])
    Q, K, V = (rng.standard_normal((BH, T, d_k), dtype=np.float32) for _ in range(3))
    O = np.full((BH, T, d_k), np.nan, np.float32)
    lib.causal_attention_forward(ptr(Q), ptr(K), ptr(V), ptr(O), BH, T, d_k)
    assert lib.cuda_cpu_launch_error() == b""
    np.testing.assert_allclose(O, oracle.causal_attention(Q, K, V), rtol=0, atol=1e-5)


MACRO_BARRIER = """\
#include <cuda_runtime.h>
#define BLOCK_SYNC() __syncthreads()
#define LOAD_THEN_SYNC(tile, src) do { tile[threadIdx.x] = (src)[threadIdx.x]; BLOCK_SYNC(); } while (0)
__global__ void reverse(const float* Q, float* O) {
    __shared__ float tile[32];
    LOAD_THEN_SYNC(tile, Q);
    O[threadIdx.x] = tile[31 - threadIdx.x];
}
extern "C" void causal_attention_forward(const float* Q, const float* K, const float* V, float* O,
                                         int BH, int T, int d_k) {
    reverse<<<1, 32>>>(Q, O);
}
"""


TEMPLATE_SHARED = """\
#include <cuda_runtime.h>
template <int N> __device__ float* scratch() { __shared__ float t[N]; return t; }
__global__ void k(const float* Q, float* O) {
    float* a = scratch<32>();
    float* b = scratch<64>();
    a[threadIdx.x] = Q[threadIdx.x];
    b[threadIdx.x] = 2.0f * Q[threadIdx.x];
    b[threadIdx.x + 32] = 3.0f;
    __syncthreads();
    O[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x];
}
extern "C" void causal_attention_forward(const float* Q, const float* K, const float* V, float* O,
                                         int BH, int T, int d_k) {
    k<<<1, 32>>>(Q, O);
}
"""


def test_each_template_instantiation_has_its_own_shared_arrays(tmp_path):
    """scratch<32> and scratch<64> are two arrays on a GPU; one array for both made O = 4 Q here, and the write
    to b[32..63] an out-of-bounds report."""
    Q = np.arange(32, dtype=np.float32).reshape(1, 1, 32)
    O = np.full(Q.shape, np.nan, np.float32)
    run_entry(tmp_path, TEMPLATE_SHARED, "template.cu", Q, O, 1, 1, 32)
    assert np.array_equal(O, 3 * Q)


VOTES = """\
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <device_launch_parameters.h>
#include <math_constants.h>
#include <cfloat>
__global__ void votes(const float* Q, float* O) {
    int t = threadIdx.x, lane = t % 32;
    float v = Q[t];
    unsigned ballot = __ballot_sync(0xffffffffu, v > 0.0f);
    int any = __any_sync(0xffffffffu, v > 100.0f), all = __all_sync(0xffffffffu, v > -1.0f);
    unsigned active = __activemask();
    int count = __syncthreads_count(v > 0.0f);
    int every = __syncthreads_and(v > -1.0f), some = __syncthreads_or(v > 100.0f);
    __threadfence();
    __threadfence_block();
    float big = (FLT_MAX > 1e38f && CUDART_INF_F > FLT_MAX) ? 1.0f : 0.0f;
    O[t * 8 + 0] = (float)(ballot >> 16);
    O[t * 8 + 1] = (float)(ballot & 0xffffu);
    O[t * 8 + 2] = (float)any;
    O[t * 8 + 3] = (float)all;
    O[t * 8 + 4] = (float)(active == 0xffffffffu);
    O[t * 8 + 5] = (float)count;
    O[t * 8 + 6] = (float)(every * 2 + some);
    O[t * 8 + 7] = big + (float)lane * 0.0f;
}
extern "C" void causal_attention_forward(const float* Q, const float* K, const float* V, float* O,
                                         int BH, int T, int d_k) {
    votes<<<1, 64>>>(Q, O);
}
"""


def test_warp_votes_counting_barriers_fences_and_cuda_s_headers(tmp_path):
    """__ballot_sync, __any_sync, __all_sync, __activemask, __syncthreads_count/_and/_or, __threadfence, FLT_MAX and
    CUDART_ constants, with cuda.h, cuda_runtime_api.h, device_launch_parameters.h and math_constants.h: each result
    as a GPU gives it (nvcc compiles the same file where it is installed)."""
    Q = np.where(np.arange(64) % 3 == 0, 1.0, -0.5).astype(np.float32)  # lanes 0, 3, 6, ... positive
    O = np.full(64 * 8, np.nan, np.float32)
    run_entry(tmp_path, VOTES, "votes.cu", Q, O, 1, 1, 64)
    out = O.reshape(64, 8)
    for warp in (0, 1):
        lanes = Q[warp * 32:(warp + 1) * 32] > 0
        ballot = sum(1 << i for i in range(32) if lanes[i])
        rows = out[warp * 32:(warp + 1) * 32]
        assert (rows[:, 0] == ballot >> 16).all() and (rows[:, 1] == ballot & 0xFFFF).all()
    assert (out[:, 2] == 0).all() and (out[:, 3] == 1).all() and (out[:, 4] == 1).all()
    assert (out[:, 5] == (Q > 0).sum()).all()  # the whole block's count, in every thread
    assert (out[:, 6] == 2).all() and (out[:, 7] == 1).all()
    if shutil.which("nvcc"):
        proc = subprocess.run(["nvcc", "-arch=sm_90", "-c", str(tmp_path / "votes.cu"), "-o", str(tmp_path / "v.o")],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_a_barrier_behind_a_macro_runs_as_a_barrier(tmp_path):
    """A kernel whose only barrier is written through a macro (itself behind another): classified as waiting, it
    runs with a real barrier (it used to stop with "internal: a kernel classified as never waiting reached a
    barrier")."""
    Q = np.arange(32, dtype=np.float32).reshape(1, 1, 32)
    O = np.full(Q.shape, np.nan, np.float32)
    run_entry(tmp_path, MACRO_BARRIER, "macro.cu", Q, O, 1, 1, 32)
    assert np.array_equal(O.reshape(-1), Q.reshape(-1)[::-1])


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed here: the CUDA compile check is skipped")
def test_reference_compiles_with_nvcc(tmp_path):
    proc = subprocess.run(["nvcc", "-arch=sm_90", "--resource-usage", "-c", str(REFERENCE), "-o",
                           str(tmp_path / "ref.o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "flash_kernel" in proc.stderr and "registers" in proc.stderr


STUB = ROOT / "csrc" / "microgpt_cuda.cu"


def test_student_stub_builds_on_the_cpu_path_and_leaves_O_untouched():
    lib = ctypes.CDLL(str(cuda_build.build(STUB)))
    Q = K = V = np.ones((1, 4, 64), np.float32)
    O = np.full((1, 4, 64), 7.0, np.float32)
    lib.causal_attention_forward(ptr(Q), ptr(K), ptr(V), ptr(O), 1, 4, 64)
    assert (O == 7.0).all()  # the stub does nothing yet


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed here: the CUDA compile check is skipped")
def test_student_stub_compiles_with_nvcc(tmp_path):
    proc = subprocess.run(["nvcc", "-arch=sm_90", "-c", str(STUB), "-o", str(tmp_path / "stub.o")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# Barriers the text does not show as such: each kernel reverses 64 floats through shared memory, so it is right only
# if every thread waits for the others' writes (two warps, so the barrier is a block's, not a warp's). Which kernels
# wait is found as they run, never from the text: each form below must act as a barrier in both thread orders.
HIDDEN_BARRIERS = {
    "macro": ("#define BLOCK_SYNC() __syncthreads()\n#define STEP() do { BLOCK_SYNC(); } while (0)\n", "STEP();"),
    "device helper": ("__device__ __attribute__((noinline)) void wait_all() { __syncthreads(); }\n", "wait_all();"),
    "template": ("template <int N> struct Sync { __device__ static void all() { if (N) __syncthreads(); } };\n",
                 "Sync<1>::all();"),
    "block.sync()": ("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n",
                     "cg::thread_block block = cg::this_thread_block(); block.sync();"),
    "cg::sync": ("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n",
                 "cg::sync(cg::this_thread_block());"),
}
HIDDEN_BARRIER_KERNEL = """\
{prelude}__global__ void reverse(const float* x, float* out) {{
    __shared__ float tile[64];
    tile[threadIdx.x] = x[threadIdx.x];
    {barrier}
    out[threadIdx.x] = tile[63 - threadIdx.x];
}}
extern "C" void run(const float* x, float* out) {{ reverse<<<1, 64>>>(x, out); }}
"""


REVERSES = """
import ctypes, os, sys
import numpy as np
lib = ctypes.CDLL(sys.argv[1])
lib.cuda_cpu_launch_error.restype = ctypes.c_char_p
x = np.arange(64, dtype=np.float32)
P = ctypes.POINTER(ctypes.c_float)
for order in ("forward", "reverse"):
    os.environ["CUDA_CPU_ORDER"] = order
    out = np.zeros(64, np.float32)
    lib.run(x.ctypes.data_as(P), out.ctypes.data_as(P))
    if lib.cuda_cpu_launch_error() != b"" or not np.array_equal(out, x[::-1]):
        sys.exit(1)
"""


def _reverses_in_both_orders(tmp_path, monkeypatch, source):
    """In a process of its own, one kernel library in it, as a grading worker has (this process has loaded many)."""
    (tmp_path / "kernel.cu").write_text(source)
    built = cuda_build.build(tmp_path / "kernel.cu")
    done = subprocess.run([sys.executable, "-c", REVERSES, str(built)], capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.returncode == 0


@pytest.mark.parametrize("form", HIDDEN_BARRIERS)
def test_barriers_are_found_as_kernels_run_not_from_their_text(tmp_path, monkeypatch, form):
    prelude, barrier = HIDDEN_BARRIERS[form]
    assert _reverses_in_both_orders(tmp_path, monkeypatch, HIDDEN_BARRIER_KERNEL.format(prelude=prelude,
                                                                                         barrier=barrier))
    # the check can fail: without the barrier (as if it were not one) some thread reads a tile entry not yet written
    (tmp_path / "none").mkdir()
    assert not _reverses_in_both_orders(tmp_path / "none", monkeypatch,
                                        HIDDEN_BARRIER_KERNEL.format(prelude=prelude, barrier=";"))


# One kernel, one bug per BH (the entry point's signature is fixed, so BH picks the mode); each run goes through
# the grader's worker, as a student's kernel does, so the messages checked here are the ones a student reads.
DIAGNOSED = """\
#include <cuda_runtime.h>
__device__ __attribute__((noinline)) float overflow() { volatile float big[40000]; big[0] = 1.0f; big[39999] = big[0]; return big[9]; }
__global__ void k(const float* Q, float* O, int mode, int n) {
    __shared__ float tile[32];
    int t = threadIdx.x;
    if (mode == 1 && t == 3) O[n] = 1.0f;
    if (mode == 2 && t == 0) O[-1] = 1.0f;
    if (mode == 3 && t == 0) ((float*)Q)[0] = 1.0f;
    if (mode == 4 && t == 0) O[0] = overflow();
    if (mode == 5 && t == 0) tile[32] = 1.0f;
    if (mode == 6 && t >= 16) return;
    if (mode == 10 && t == 2) O[0] = reinterpret_cast<const float4*>(Q + 2)->x;
    tile[t] = Q[t];
    __syncthreads();
    O[t] = tile[31 - t];
}
extern "C" void causal_attention_forward(const float* Q, const float* K, const float* V, float* O,
                                         int BH, int T, int d_k) {
    if (BH == 7) {
        float* scratch;
        cudaMalloc(&scratch, 256);
        cudaFree(scratch);
        k<<<1, 32>>>(scratch, O, 0, BH * T * d_k);
        return;
    }
    if (BH == 8) { k<<<1, 32>>>(nullptr, O, 0, BH * T * d_k); return; }
    if (BH == 11) { volatile float misaligned = *(const float*)((const char*)Q + 1); (void)misaligned; return; }
    if (BH == 9) {
        float* host = new float[64]();  // host memory, not device memory
        k<<<1, 32>>>(host, O, 0, BH * T * d_k);
        cudaDeviceSynchronize();
        delete[] host;
        return;
    }
    k<<<1, 32>>>(Q, O, BH, BH * T * d_k);
}
"""

DIAGNOSES = [
    (1, r"out-of-bounds write: O has 64 floats, so its last index is 63, and this touched float index 64, "
        r"in thread \(3,0,0\) of block \(0,0,0\)\n  at diag.cu:6"),
    (2, r"out-of-bounds write: 4 bytes before the start of O"),
    (3, r"wrote into Q \(float index 0\), an input the kernel may only read .* in thread \(0,0,0\).*\n  at diag.cu:8"),
    (4, r"stack overflow: .* in thread \(0,0,0\) of block \(0,0,0\)"),
    (5, r"out-of-bounds write to shared memory past the end of `tile`: byte offset 128 of an array of 128 bytes "
        r"\(declared on line 4\), in thread \(0,0,0\) of block \(0,0,0\)\n  at diag.cu:10"),
    (7, r"read the buffer from cudaMalloc on line 21 after cudaFree released it"),
    (8, r"read through a null pointer"),
    (10, r"misaligned address: at diag.cu:12, thread \(2,0,0\) of block \(0,0,0\) used a member of a float4 at "
         r"0x[0-9a-f]+, which is not a multiple of 16 bytes .* cudaErrorMisalignedAddress"),
    (11, r"misaligned address in host code: at diag.cu:27, a float at 0x[0-9a-f]+, which is not a multiple of 4 "
         r"bytes. The CPU runtime checks every access of a .cu file"),
]


def diagnosed_worker(tmp_path_factory, **env):
    """A worker with the DIAGNOSED kernel, built and run with `env` set (GRADER_CUDA_THREADS, CUDA_CPU_THREADS): a
    module fixture's body, for each way the runtime may run its threads."""
    from grader.sandbox.client import Submission
    folder = tmp_path_factory.mktemp("diag")
    (folder / "diag.cu").write_text(DIAGNOSED)
    mp = pytest.MonkeyPatch()
    for name, value in env.items():
        mp.setenv(name, value)
    try:
        with Submission(folder, kernel_library=cuda_build.build(folder / "diag.cu"), timeout=30) as sub:
            yield sub
    finally:
        mp.undo()


def assert_diagnosed(worker, mode, message):
    """DIAGNOSES[mode]'s bad access stops the call with its message."""
    from grader.common.failures import StudentCodeError
    x = np.ones((mode, 1, 64), np.float32)
    with pytest.raises(StudentCodeError) as caught:
        worker.call("causal_attention_forward", x, x, x)
    assert re.search(message, str(caught.value)), str(caught.value)


@pytest.fixture(scope="module")
def diagnosed(tmp_path_factory):
    yield from diagnosed_worker(tmp_path_factory)


@pytest.mark.parametrize("mode,message", DIAGNOSES, ids=[f"mode{m}" for m, _ in DIAGNOSES])
def test_bad_accesses_are_named_with_buffer_thread_and_line(diagnosed, mode, message):
    assert_diagnosed(diagnosed, mode, message)


# Far out of bounds: each buffer has a guard region of its own at either end, so a write at any distance faults in
# the guard of the buffer it strayed from, never in (or as) a neighbour; BH picks the mode, as above.
FAR = """\
#include <cuda_runtime.h>
__global__ void poke(float* p, long index) { p[index] = 1.0f; }
extern "C" void causal_attention_forward(const float* Q, const float* K, const float* V, float* O,
                                         int BH, int T, int d_k) {
    float *a, *b;
    cudaMalloc(&a, 64 * sizeof(float));
    cudaMalloc(&b, 64 * sizeof(float));
    float *h, *m;
    cudaMallocHost(&h, 64 * sizeof(float));
    cudaMallocManaged(&m, 64 * sizeof(float));
    cudaMemset(a, 0, 64 * sizeof(float));
    const long index[] = {0, 64 + 2048, 64 + 262144, -2048, -262144, (1L << 31) - 1, 0, 64 + 2048, -2048};
    poke<<<1, 1>>>(BH == 3 || BH == 4 ? a : BH == 7 ? h : BH == 8 ? m : b, index[BH]);
    cudaMemcpy(O, a, 64 * sizeof(float), cudaMemcpyDeviceToDevice);  // a, untouched unless a write strayed into it
}
"""

FAR_DIAGNOSES = [
    (1, r"out-of-bounds write: the buffer from cudaMalloc on line 7 has 64 floats, so its last index is 63, and this "
        r"touched float index 2112, in thread \(0,0,0\) of block \(0,0,0\)\n  at far.cu:2"),  # 8 KiB past b
    (2, r"out-of-bounds write: the buffer from cudaMalloc on line 7 has 64 floats, .* float index 262208,"),  # 1 MiB
    (3, r"out-of-bounds write: 8192 bytes before the start of the buffer from cudaMalloc on line 6 \(float index -2048\)"),
    (4, r"out-of-bounds write: 1048576 bytes before the start of the buffer from cudaMalloc on line 6 "),
    (5, r"out-of-bounds write: the buffer from cudaMalloc on line 7 has 64 floats, .* float index 2147483647,"),  # 8 GiB
    (7, r"out-of-bounds write: the pinned host buffer from line 9 has 64 floats, .* float index 2112,"),
    (8, r"out-of-bounds write: 8192 bytes before the start of the buffer from cudaMallocManaged on line 10 "),
]


@pytest.fixture(scope="module")
def far(tmp_path_factory):
    from grader.sandbox.client import Submission
    folder = tmp_path_factory.mktemp("far")
    (folder / "far.cu").write_text(FAR)
    with Submission(folder, kernel_library=cuda_build.build(folder / "far.cu"), timeout=30) as sub:
        yield sub


@pytest.mark.parametrize("mode,message", FAR_DIAGNOSES, ids=[f"mode{m}" for m, _ in FAR_DIAGNOSES])
def test_a_far_access_faults_in_its_own_buffers_guard(far, mode, message):
    from grader.common.failures import StudentCodeError
    x = np.ones((mode, 1, 64), np.float32)
    with pytest.raises(StudentCodeError) as caught:
        far.call("causal_attention_forward", x, x, x)
    assert re.search(message, str(caught.value)), str(caught.value)


def test_the_far_access_kernel_runs_clean_in_bounds(far):
    """The same kernel writing b[0] (mode 6): no fault, and a (copied to O) keeps its zeros, so each mode above
    fails for its index alone."""
    x = np.ones((6, 1, 64), np.float32)
    out = far.call("causal_attention_forward", x, x, x).reshape(-1)
    assert (out[:64] == 0).all()


# Shared memory: each __shared__ array (and the dynamic part) sits in a window of its own between far guard regions,
# so an access past either end, at any distance, faults naming that array; a write outside an array but inside its
# window's pages (before its start, or past the end of an odd-sized one) is named when the block ends. BH picks
# the mode. `s_a` and `s_b` are declared together: s_a[272] was s_b[0] when arrays shared one arena with 64-byte
# red zones, and was never reported.
SHARED = """\
#include <cuda_runtime.h>
__global__ void k(float* O, int mode, long index) {
    __shared__ float s_a[256], s_b[256];
    __shared__ char flags[10];
    extern __shared__ float dyn[];
    int t = threadIdx.x;
    s_a[t] = t;
    s_b[t] = 2 * t;
    dyn[t] = 3 * t;
    if (t < 10) flags[t] = 1;
    __syncthreads();
    if (t == 0 && blockIdx.x == 1) {
        if (mode == 3) O[0] = s_b[index];
        else if (mode == 5) dyn[index] = -1.0f;
        else if (mode == 7) flags[index] = 0;
        else s_a[index] = -1.0f;
        if (mode == 9) __trap();  // after a write before s_a: the check at the block's end never runs
    }
    __syncthreads();
    O[blockIdx.x * 256 + t] = s_a[t] + s_b[255 - t] + dyn[t] + flags[t % 10];
}
extern "C" void causal_attention_forward(const float* Q, const float* K, const float* V, float* O,
                                         int BH, int T, int d_k) {
    const long index[] = {0, 256 + 256, 256 + 262144, -262144, 272, 256, -700, 12, 0, -700};
    k<<<2, 256, 256 * sizeof(float)>>>(O, BH, index[BH]);
}
"""

SHARED_DIAGNOSES = [
    (1, r"out-of-bounds write to shared memory past the end of `s_a`: byte offset 2048 of an array of 1024 bytes "
        r"\(declared on line 3\), in thread \(0,0,0\) of block \(1,0,0\)\n  at shared.cu:16"),  # 1 KiB past s_a
    (2, r"out-of-bounds write to shared memory past the end of `s_a`: byte offset 1049600 of an array of 1024 bytes "
        r"\(declared on line 3\), in thread \(0,0,0\) of block \(1,0,0\)"),  # 1 MiB past
    (3, r"out-of-bounds read from shared memory before the start of `s_b`: byte offset -1048576 of an array of 1024 "
        r"bytes \(declared on line 3\), in thread \(0,0,0\) of block \(1,0,0\)\n  at shared.cu:13"),  # 1 MiB before
    (4, r"out-of-bounds write to shared memory past the end of `s_a`: byte offset 1088 of an array of 1024 bytes "
        r"\(declared on line 3\), in thread \(0,0,0\) of block \(1,0,0\)"),  # where s_b[0] was
    (5, r"out-of-bounds write to shared memory past the end of `extern __shared__ dyn\[\]`: byte offset 1024 of the "
        r"1024 bytes asked for at launch, in thread \(0,0,0\) of block \(1,0,0\)\n  at shared.cu:14"),
    (6, r"out-of-bounds write to shared memory before the start of `s_a`: byte offset -2800 of an array of 1024 bytes "
        r"\(declared on line 3\), in block \(1,0,0\)"),  # inside s_a's pages: found when the block ends
    (7, r"out-of-bounds write to shared memory past the end of `flags`: byte offset 12 of an array of 10 bytes "
        r"\(declared on line 4\), in block \(1,0,0\)"),  # in the bytes that round flags up to 16
    (9, r"__trap\(\) at shared.cu:17 in thread \(0,0,0\) of block \(1,0,0\) stopped the kernel"),
]


@pytest.fixture(scope="module")
def shared():
    from grader.sandbox.client import Submission
    folder = Path(tempfile.mkdtemp(prefix="shared-"))  # the grader's worker (another uid, as root) reads it
    folder.chmod(0o755)
    (folder / "shared.cu").write_text(SHARED)
    try:
        with Submission(folder, kernel_library=cuda_build.build(folder / "shared.cu"), timeout=30) as sub:
            yield sub
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("mode,message", SHARED_DIAGNOSES, ids=[f"mode{m}" for m, _ in SHARED_DIAGNOSES])
def test_a_shared_array_is_guarded_at_any_distance_and_named(shared, mode, message):
    from grader.common.failures import StudentCodeError
    x = np.ones((mode, 8, 64), np.float32)  # O holds both blocks' 256 floats
    with pytest.raises(StudentCodeError) as caught:
        shared.call("causal_attention_forward", x, x, x)
    assert re.search(message, str(caught.value)), str(caught.value)


def test_the_shared_memory_kernel_runs_clean_in_bounds(shared):
    """The same kernel writing s_a[0] (mode 8): no report, and every array holds what its threads wrote, so each
    mode above fails for its index alone. Run after them in the same worker: the windows are reused, and the stray
    writes of modes 6, 7 and 9 (whose launch failed before any check) left nothing behind."""
    x = np.ones((8, 8, 64), np.float32)
    out = shared.call("causal_attention_forward", x, x, x).reshape(-1)
    t = np.arange(256)
    expected = t + 2 * (255 - t) + 3 * t + 1
    expected[0] = -1 + 2 * 255 + 0 + 1  # s_a[0], written -1 by thread 0 of block 1 only
    assert (out[:256] == t + 2 * (255 - t) + 3 * t + 1).all() and (out[256:512] == expected).all()


ASSERTS = """\
#include <cassert>
__global__ void k(const float* Q, float* O, int n) {
    __shared__ float tile[64];
    int t = threadIdx.x;
    tile[t] = Q[t];
    __syncthreads();
    assert(tile[t] == tile[t]);  // no NaN
    O[t] = tile[63 - t];
}
extern "C" void causal_attention_forward(const float* Q, const float* K, const float* V, float* O,
                                         int BH, int T, int d_k) {
    k<<<1, 64>>>(Q, O, BH * T * d_k);
    if (cudaDeviceSynchronize() != cudaErrorAssert) return;
    k<<<1, 64>>>(Q, O, BH * T * d_k);  // after a failed assert, as on a GPU, no launch runs: O keeps its NaN
}
"""


def test_a_failed_assert_in_a_kernel_stops_it_and_is_reported(tmp_path_factory):
    """A device-side assert (here in a kernel with barriers, so each thread is a fiber): the grader says which
    assert failed where, in which thread; the kernel printed CUDA's own line; threads whose assert held ran on."""
    from grader.common.failures import StudentCodeError
    from grader.sandbox.client import Submission
    folder = tmp_path_factory.mktemp("asserts")
    (folder / "asserts.cu").write_text(ASSERTS)
    with Submission(folder, kernel_library=cuda_build.build(folder / "asserts.cu"), timeout=30) as sub:
        x = np.arange(64, dtype=np.float32).reshape(1, 1, 64)
        assert (sub.call("causal_attention_forward", x, x, x).reshape(-1) == x.reshape(-1)[::-1]).all()
        x.reshape(-1)[9] = np.nan
        with pytest.raises(StudentCodeError) as caught:
            sub.call("causal_attention_forward", x, x, x)
        printed = sub.output_since_call()
    assert re.search(r"assert\(tile\[t\] == tile\[t\]\) failed at asserts.cu:7 in thread \(9,0,0\) of block "
                     r"\(0,0,0\): the kernel stops there, as on a GPU, and every later CUDA call returns "
                     r"cudaErrorAssert", str(caught.value)), str(caught.value)
    assert ("asserts.cu:7: void k(const float *, float *, int): block: [0,0,0], thread: [9,0,0] Assertion "
            "`tile[t] == tile[t]` failed.") in printed + str(caught.value)


def test_early_return_before_a_barrier_runs_with_a_warning(diagnosed):
    x = np.arange(6 * 64, dtype=np.float32).reshape(6, 1, 64)
    out = diagnosed.call("causal_attention_forward", x, x, x).reshape(-1)
    # threads 16..31 returned before loading their half of the tile, so threads 0..15 read NaN (as shared memory
    # starts here), and the barrier released the rest of the block as the hardware does
    assert np.isnan(out[:16]).all()
    assert re.search(r"in block \(0,0,0\), 16 of 32 threads \(thread \(16,0,0\) first\) had returned before the "
                     r"__syncthreads\(\) on line 14", diagnosed.warnings), diagnosed.warnings


def test_a_shared_variable_outside_any_function_fails_each_launch_with_what_to_do(tmp_path):
    """Allowed on a GPU (one per block), but bound once as the library loads here: said, never a crash at load."""
    from grader.common.failures import StudentCodeError
    from grader.sandbox.client import Submission
    (tmp_path / "outside.cu").write_text(
        "#include <cuda_runtime.h>\n__shared__ float tile[32];\n"
        "__global__ void k(float* O) { tile[threadIdx.x] = 1.0f; __syncthreads(); O[threadIdx.x] = tile[0]; }\n"
        'extern "C" void causal_attention_forward(const float* Q, const float* K, const float* V, float* O,\n'
        "                                         int BH, int T, int d_k) { k<<<1, 32>>>(O); }\n")
    x = np.ones((1, 1, 64), np.float32)
    with Submission(tmp_path, kernel_library=cuda_build.build(tmp_path / "outside.cu"), timeout=30) as sub:
        with pytest.raises(StudentCodeError, match=r"`tile` \(line 2\) is a __shared__ variable declared outside any "
                                                   r"function, which the CPU runtime does not emulate"):
            sub.call("causal_attention_forward", x, x, x)


def test_a_kernel_handed_host_memory_runs_and_the_student_is_told(diagnosed):
    """As on a GPU with HMM (recent Linux drivers): the kernel reads the host buffer; on others it would fault."""
    x = np.ones((9, 1, 64), np.float32)
    out = diagnosed.call("causal_attention_forward", x, x, x).reshape(-1)
    assert (out[:32] == 0).all()  # the zeros of new float[64]()
    assert re.search(r"your launch of k at line 30 passes, as argument 1, a pointer to host memory .* "
                     r"cudaErrorIllegalAddress", diagnosed.warnings), diagnosed.warnings


def test_nvcc_resource_usage_is_one_line_per_kernel():
    ptxas = ("ptxas info    : Compiling entry function '_Z12flash_kernelPKfS0_S0_Pfii' for 'sm_90'\n"
             "ptxas info    : Function properties for _Z12flash_kernelPKfS0_S0_Pfii\n"
             "    512 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
             "ptxas info    : Used 32 registers, used 1 barriers, 512 bytes cumulative stack size, 32768 bytes smem\n"
             "ptxas info    : Compiling entry function 'plain' for 'sm_90'\n"
             "ptxas info    : Used 8 registers, used 0 barriers\n")
    assert nvcc.resource_usage(ptxas) == [
        "flash_kernel: 32 registers, 32768 bytes shared memory, 512 bytes stack, 8 bytes spilled",
        "plain: 8 registers, 0 bytes shared memory"]


# issue 15: the classic divergence, a barrier in each branch of an if, with 256 threads (eight warps) and T < 256
BOTH_BRANCHES = """\
#include <cuda_runtime.h>
__global__ void k(const float* Q, float* O, int T) {
    __shared__ float tile[256];
    int tid = threadIdx.x;
    if (tid < T) {
        tile[tid] = Q[tid];
        __syncthreads();
    } else {
        tile[tid] = 0.0f;
        __syncthreads();
    }
    O[tid] = tile[255 - tid];
}
extern "C" void causal_attention_forward(const float* Q, const float* K, const float* V, float* O,
                                         int BH, int T, int d_k) {
    k<<<1, 256>>>(Q, O, 100);
}
"""


def test_barriers_in_both_branches_are_reported_as_divergence_with_both_lines(tmp_path):
    """Through the grader's worker, as a student sees it: the launch's failure, not "not implemented yet (it left O
    untouched)", and never a hang."""
    from grader.common.failures import NotImplementedYet, StudentCodeError
    from grader.sandbox.client import Submission
    (tmp_path / "branches.cu").write_text(BOTH_BRANCHES)
    with Submission(tmp_path, kernel_library=cuda_build.build(tmp_path / "branches.cu"), timeout=30) as sub:
        x = np.ones((1, 1, 256), np.float32)
        with pytest.raises(StudentCodeError) as caught:
            sub.call("causal_attention_forward", x, x, x)
    message = str(caught.value)
    assert not isinstance(caught.value, NotImplementedYet), message
    assert "a kernel launch failed: block (0,0,0): threads wait at different barriers (divergence)" in message
    assert "thread (0,0,0) waits at __syncthreads() on line 7" in message, message
    assert "thread (100,0,0) waits at __syncthreads() on line 10" in message, message
