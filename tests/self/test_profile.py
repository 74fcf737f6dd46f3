"""The profiled build's memory counts (csrc/cuda_cpu/src/profile.cpp, grader/cuda/profile.py) against answers worked
out by hand: coalescing, strides, vector loads, misalignment, shared-memory bank conflicts, broadcasts, divergence,
and the reference kernels at the profiled shape."""

import ctypes
from types import SimpleNamespace

import pytest

from grader.common.layout import REFERENCE_KERNEL
from grader.cuda import build as cuda_build, profile, traffic_report

KNOWN = r"""
#include <cuda_runtime.h>
__global__ void coalesced(const float* in, float* out) { int i = threadIdx.x; out[i] = in[i]; }
__global__ void strided(const float* in, float* out) { int i = threadIdx.x; out[i] = in[i * 64]; }
__global__ void vector4(const float4* in, float4* out) { int i = threadIdx.x; out[i] = in[i]; }
__global__ void shifted(const float* in, float* out) { int i = threadIdx.x; out[i] = in[i + 1]; }
__global__ void banks(float* out) {
    __shared__ float tile[32][32];
    __shared__ float padded[32][33];
    int i = threadIdx.x;
    for (int j = 0; j < 32; ++j) tile[i][j] = padded[i][j] = j;
    __syncthreads();
    float column = tile[i][0];
    float row = tile[0][i];
    float padded_column = padded[i][0];
    float one_word = tile[0][0];
    out[i] = column + row + padded_column + one_word;
}
__global__ void divergent(const float* in, float* out) { int i = threadIdx.x; if (i < 16) out[i] = in[i]; }
__global__ void counting(float* out) {
    __shared__ int count;
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    atomicAdd(&count, 1);
    __syncthreads();
    if (threadIdx.x < 8) atomicAdd(&out[0], 1.0f);
}
extern "C" void run(const float* in, float* out) {
    coalesced<<<1, 32>>>(in, out);
    strided<<<1, 32>>>(in, out);
    vector4<<<1, 32>>>((const float4*)in, (float4*)out);
    shifted<<<1, 32>>>(in, out);
    banks<<<1, 32>>>(out);
    divergent<<<1, 32>>>(in, out);
    counting<<<3, 32>>>(out);
}
"""


@pytest.fixture(scope="module")
def known(tmp_path_factory):
    folder = tmp_path_factory.mktemp("profiled")
    source = folder / "known.cu"
    source.write_text(KNOWN)
    library = cuda_build.build(source, profiled=True)
    lib = ctypes.CDLL(str(library))
    lib.cuda_cpu_guarded_alloc.restype = ctypes.c_void_p
    lib.cuda_cpu_guarded_alloc.argtypes = [ctypes.c_size_t, ctypes.c_char_p]
    lib.cuda_cpu_profile_report.restype = ctypes.c_char_p
    buffers = [lib.cuda_cpu_guarded_alloc(4 * 4096, name) for name in (b"in", b"out")]
    lib.cuda_cpu_begin_call()
    lib.cuda_cpu_profile_begin()
    lib.run(*(ctypes.c_void_p(b) for b in buffers))
    found = profile.parse(lib.cuda_cpu_profile_report().decode(), library)
    lines = KNOWN.splitlines()
    # each site with its line's text
    return SimpleNamespace(sites=[(s, lines[int(s.line.rpartition(":")[2]) - 1].strip()) for s in found.sites],
                           kernels=found.kernels)


def site(known, kernel, kind, text):
    return next(s for s, line in known.sites if s.kernel == kernel and s.kind == kind and text in line)


@pytest.mark.parametrize("kernel, sectors, stride", [
    ("coalesced", 4, 4),     # 32 floats side by side: 128 bytes, 4 sectors
    ("strided", 32, 256),    # 256 bytes apart: a sector each
    ("vector4", 16, 16),     # 32 float4s: 512 bytes
    ("shifted", 5, 4),       # 128 bytes starting 4 bytes into a sector: 5 sectors
])
def test_a_warp_s_global_load_costs_the_sectors_its_addresses_touch(known, kernel, sectors, stride):
    s = site(known, kernel, "load", "out[i] = in[")
    assert (s.requests, s.cost, s.lanes, s.stride) == (1, sectors, 32, stride)


@pytest.mark.parametrize("text, wavefronts", [
    ("float column = tile[i][0];", 32),         # a column of float[32][32]: every lane in bank 0, 32 words
    ("float row = tile[0][i];", 1),             # a row: 32 banks, one word each
    ("float padded_column = padded[i][0];", 1),  # [32][33]: the column spreads over all 32 banks
    ("float one_word = tile[0][0];", 1),        # one word for every lane: a broadcast
])
def test_a_warp_s_shared_load_costs_one_wavefront_per_word_in_its_busiest_bank(known, text, wavefronts):
    s = site(known, "banks", "load", text)
    assert (s.requests, s.cost, s.ideal) == (1, wavefronts, 1)


def test_the_stores_of_a_column_loop_conflict_32_ways_and_the_padded_ones_not_at_all(known):
    stores = sorted(s.cost for s, _ in known.sites if s.kernel == "banks" and s.kind == "store" and s.space == "shared")
    assert stores == [32, 1024]  # 32 requests each: padded[i][j] 1 wavefront, tile[i][j] 32


def test_a_divergent_branch_s_request_has_the_lanes_that_took_it(known):
    s = site(known, "divergent", "load", "out[i] = in[i]")
    assert (s.requests, s.lanes, s.cost) == (1, 16, 2)  # 16 floats: 64 bytes, 2 sectors


def test_the_reference_kernels_counts_match_the_hand_count():
    """At 1 x 128 x 64 the tiled kernel runs 2 blocks of 64 threads (4 warps). Each warp loads its 32 rows of Q and
    stores O a float at a time (64 requests each, lanes 256 bytes apart: 32 sectors), and loads K and V tiles in
    coalesced rows (64 requests per tile each, 4 sectors): block 0 needs one tile, block 1 two, so 6 warp-tiles.
    Requests: 4 x 64 x 2 + 6 x 128 = 1280; sectors: 512 x 32 + 768 x 4 = 19456. The tiles it reads back from shared
    memory are read by every lane at once (one word: a broadcast), one wavefront each. The lesson's softmax gives a
    thread a row, so its lanes read 128 floats (512 bytes) apart: 32 sectors a request."""
    tiled = profile.totals(profile.run(REFERENCE_KERNEL, defines=["MICROGPT_VERSION=2"]))["flash_kernel"]
    assert (tiled["global requests"], tiled["sectors"]) == (1280, 19456)
    assert tiled["wavefronts"] == tiled["shared requests"] > 0
    # block 0 passes its one tile's two barriers, block 1 its two tiles' four; Q, K, V and O are 4 x 32 KiB, all
    # touched: 4096 sectors
    assert (tiled["blocks"], tiled["barriers"], tiled["touched"]) == (2, 6, 4 * 32768)
    lesson = profile.totals(profile.run(REFERENCE_KERNEL, defines=["MICROGPT_VERSION=1"]))
    assert lesson["softmax_kernel"]["sectors"] == 32 * lesson["softmax_kernel"]["global requests"]


def test_the_report_tables_each_kernel_and_names_the_costliest_lines():
    report = traffic_report.report(REFERENCE_KERNEL, REFERENCE_KERNEL)
    q_line = next(n for n, line in enumerate(REFERENCE_KERNEL.read_text().splitlines(), 1) if "q[d] = i < T ? Q[" in line)
    q_code = " ".join(REFERENCE_KERNEL.read_text().splitlines()[q_line - 1].split())[:100]
    assert (f"line {q_line} ({q_code}): consecutive threads read addresses 256 bytes apart, 32.0 sectors a request "
            "where 4.0 would do") in report, report
    assert "scaled exactly to 12x1024x64" in report
    rows = {f"{label} {line.split()[len(label.split())]}": line.split()[len(label.split()) + 1:]
            for line in report.splitlines() for label in ("lesson's", "tiled ref.") if line.startswith(f"  {label} ")}
    # the softmax's lanes read rows 4 KiB apart: 32 sectors a request where 4 would hold them; 32 lanes active
    assert rows["lesson's softmax_kernel"][:3] == ["1.2M", "32.0", "4.0"] and rows["lesson's softmax_kernel"][5] == "32.0"
    # 466,944 requests at 12x1024x64 (see the scaling test), broadcasts from shared memory: 1 wavefront each
    assert rows["tiled ref. flash_kernel"][0] == "467k" and rows["tiled ref. flash_kernel"][4] == "1.0"
    assert "tiled ref.: at least 104.0 µs, bound by L1 traffic" in report


def test_counts_scaled_from_the_small_runs_are_those_of_a_run_at_the_larger_shape():
    """scale() fits each count as heads x a quadratic in T through T = 64, 128, 192 and checks it at T = 256; its
    answer at 1 x 512 x 64 must be exactly what a profiled run there counts, for both reference versions."""
    for version in (2, 1):
        defines = [f"MICROGPT_VERSION={version}"]
        measured = profile.measure(REFERENCE_KERNEL, defines=defines)
        scaled, why = profile.scale(measured.profiles, (1, 512, 64))
        assert why is None
        direct = profile.totals(profile.run(REFERENCE_KERNEL, defines=defines, shape=(1, 512, 64)))
        assert {k: {c: direct[k][c] for c in profile.SCALED} for k in direct} == scaled


def _profile_of(sectors_by_run):
    return [profile.Profile([profile.Site("k", "global", "load", "", n, n, n, n, 4 * n)], {}) for n in sectors_by_run]


def test_counts_that_do_not_grow_as_heads_times_a_quadratic_are_not_scaled():
    # q(n) = 10 n^2 + 3 n + 7 at n = 1..4, two heads at n = 1 twice one: scaled to T = 1024 (n = 16) x 12 heads
    q = lambda n: 10 * n * n + 3 * n + 7  # noqa: E731
    scaled, why = profile.scale(_profile_of([q(1), 2 * q(1), q(2), q(3), q(4)]))
    assert why is None and scaled["k"]["sectors"] == 12 * q(16)
    # a cube in T (a kernel re-reading every row for every pair) is caught at T = 256
    scaled, why = profile.scale(_profile_of([1, 2, 8, 27, 64]))
    assert scaled is None and "quadratic" in why
    # two heads sharing work (a grid over heads x T rounded up to whole blocks)
    scaled, why = profile.scale(_profile_of([5, 9, 20, 45, 80]))
    assert scaled is None and "2 heads" in why


def test_the_kernel_bound_is_its_l1_traffic_where_that_exceeds_the_problem_s():
    """The tiled kernel at 12 x 1024 x 64 reads K and V back from shared memory as 26,370,048 wavefronts (one warp
    request each: every lane reads the same word) and makes 3,244,032 global sectors: 26,370,048 + 811,008 = 27.18M
    L1 clocks over an H100's 132 SMs at 1.98 GHz, 104.0 µs, above the problem's own 24.1 µs of FP32 arithmetic.
    The lesson's kernels, 933M sectors: 893 µs."""
    from grader.cuda import gpus
    h100 = gpus.table()["H100"]
    tiled = profile.measure(REFERENCE_KERNEL, defines=["MICROGPT_VERSION=2"])
    seconds, binding, parts = traffic_report.bound(tiled, h100)
    assert binding == "L1 traffic" and round(seconds * 1e6, 1) == 104.0 and round(parts["FP32 arithmetic"] * 1e6, 1) == 24.1
    lesson = profile.measure(REFERENCE_KERNEL, defines=["MICROGPT_VERSION=1"])
    assert round(traffic_report.bound(lesson, h100)[0] * 1e6) == 893


def test_the_roofline_picture_places_each_version(tmp_path):
    from grader.cuda import gpus
    from grader.report import roofline_picture
    versions = [(label, profile.measure(REFERENCE_KERNEL, defines=[f"MICROGPT_VERSION={v}"]))
                for label, v in (("yours", 1), ("tiled ref.", 2), ("lesson's", 1))]
    data = traffic_report.roofline_points(versions, gpus.table()["H100"])
    assert data["points"]["yours"] == data["points"]["lesson's"] and data["compulsory_bytes"] == 12_582_912
    path = roofline_picture.draw(data, tmp_path / "roofline.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 20_000


def test_the_lower_bound_is_the_arithmetic_or_the_compulsory_traffic_at_the_gpu_s_peaks():
    """At 12 x 1024 x 64: 524,800 causal pairs a head, 2 products of d_k multiply-adds each: 1,612,185,600 FLOPs; at
    an H100's FP32 peak (132 SMs x 128 lanes x 2 x 1.98 GHz = 66.9 TFLOP/s) 24.1 µs, above the 12,582,912 bytes of
    Q, K, V and O at its 3.35 TB/s (3.75 µs). On a T4 (8.14 TFLOP/s, 320 GB/s) at T = 2 memory binds instead."""
    from grader.cuda import gpus, roofline
    h100, t4 = gpus.table()["H100"], gpus.table()["T4"]
    assert roofline.flops((12, 1024, 64)) == 1_612_185_600
    assert roofline.compulsory_bytes((12, 1024, 64)) == 12_582_912
    seconds, binding = roofline.bound((12, 1024, 64), h100)
    assert round(seconds * 1e6, 1) == 24.1 and binding == "FP32 arithmetic"
    seconds, binding = roofline.bound((12, 2, 64), t4)
    assert binding == "DRAM bandwidth" and seconds == pytest.approx(4 * 4 * 12 * 2 * 64 / 320.064e9)
    assert "at least 24.1 µs at 12x1024x64, bound by FP32 arithmetic" in roofline.words((12, 1024, 64), h100)


def test_the_lesson_s_kernels_move_far_more_than_the_tiled_one():
    """The four kernels write the (T, T) scores and read them back three times; the tiled kernel keeps them on
    chip: the difference a GPU's counters show, here in bytes through L1 against the problem's compulsory ones."""
    from grader.cuda import roofline
    tiled = profile.measure(REFERENCE_KERNEL, defines=["MICROGPT_VERSION=2"]).l1_bytes()
    lesson = profile.measure(REFERENCE_KERNEL, defines=["MICROGPT_VERSION=1"]).l1_bytes()
    assert 8 * tiled < lesson and tiled > roofline.compulsory_bytes(profile.TARGET)


def test_atomics_and_barriers_are_counted_per_kernel(known):
    """3 blocks of 32: each thread adds to the block's shared counter (96 on shared memory), the first 8 of each
    block to out[0] (24 on global memory); two barriers a block."""
    counting = known.kernels["counting"]
    assert (counting.blocks, counting.barriers, counting.atomics, counting.shared_atomics) == (3, 6, 120, 96)


def test_make_grade_shows_a_correct_kernel_s_table_and_draws_its_roofline(tmp_path):
    """`grade` with the profile on (as a student's `make grade`): the kernel report's table and bounds, and the
    roofline picture in the report folder, named on the scorecard."""
    import os
    import shutil
    import subprocess
    import sys
    from grader.common.layout import ROOT
    submission = tmp_path / "sub"
    submission.mkdir()
    shutil.copy(REFERENCE_KERNEL, submission / "microgpt_cuda.cu")
    shutil.copy(ROOT / "solutions" / "attention.py", submission / "attention.py")
    env = dict(os.environ, GRADER_PROFILE="on", GRADER_WARM="off")
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", "--submission", str(submission), "--exercise",
                           "cuda_kernel", "--report-dir", str(tmp_path / "report")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "kernel                          global sect/req" in proc.stdout
    assert "yours: at least 104.0 µs, bound by L1 traffic" in proc.stdout
    assert (tmp_path / "report" / "cuda_kernel_roofline.png").is_file() and "cuda_kernel_roofline.png" in proc.stdout
