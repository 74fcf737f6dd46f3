"""What the CPU runtime does not emulate is said in the student's terms: the feature, the student's line and what
to write instead (grader/cuda/not_emulated.py), never g++'s own words; other errors keep g++'s words, quoting the
student's own lines; __trap() and a launch from a kernel stop the launch with their line."""

import re
import subprocess
import textwrap

import pytest

from grader.cuda import build as cuda_build

MAIN = "int main() { return 0; }\n"
PROBES = [  # (id, source, the feature's words, the line named)
    ("wmma", "#include <mma.h>\nusing namespace nvcuda;\n" + MAIN, r"tensor-core matrix operations \(<mma.h>, "
     r"nvcuda::wmma\)", "1 of k.cu: #include <mma.h>"),
    ("cub", "#include <cuda_runtime.h>\n#include <cub/cub.cuh>\n" + MAIN, r"CUB \(<cub/...>\)",
     "2 of k.cu: #include <cub/cub.cuh>"),
    ("thrust", "#include <thrust/device_vector.h>\n" + MAIN, r"Thrust", "1 of k.cu: #include <thrust/device_vector.h>"),
    ("pipeline", "__global__ void k(const float* x) {\n    __shared__ float s[32];\n"
     "    __pipeline_memcpy_async(&s[threadIdx.x], &x[threadIdx.x], 4);\n}\n" + MAIN,
     r"asynchronous copies \(cuda::pipeline, memcpy_async, __pipeline_\*, cp.async\)",
     "3 of k.cu: __pipeline_memcpy_async(&s[threadIdx.x], &x[threadIdx.x], 4);"),
    ("cuda_std", "#include <cuda/std/limits>\n" + MAIN, r"libcu\+\+", "1 of k.cu: #include <cuda/std/limits>"),
    ("cubemap", "__global__ void k(float* out, cudaTextureObject_t t) {\n"
     "    out[0] = texCubemap<float>(t, 1.0f, 0.0f, 0.0f);\n}\n" + MAIN,
     r"cubemap textures and surfaces, texture gathers and mipmapped arrays",
     "2 of k.cu: out[0] = texCubemap<float>(t, 1.0f, 0.0f, 0.0f);"),
    ("graph", "int main() {\n    cudaGraph_t graph;\n    return 0;\n}\n", r"CUDA graphs",
     "2 of k.cu: cudaGraph_t graph;"),
    ("cooperative_launch", "__global__ void k() {}\nint main() {\n"
     "    cudaLaunchCooperativeKernel((void*)k, 1, 1, nullptr);\n}\n", r"cooperative launches",
     "3 of k.cu: cudaLaunchCooperativeKernel((void*)k, 1, 1, nullptr);"),
    ("asm", "__global__ void k(float* d, unsigned a) {\n    float c = 0;\n"
     "    asm volatile(\"mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0}, {%1}, {%1}, {%0};\" : \"+f\"(c) : \"r\"(a));\n"
     "    d[0] = c;\n}\n" + MAIN, r"inline PTX assembly \(asm\)", "3 of k.cu: asm volatile(\"mma.sync"),
    ("coalesced_threads", "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
     "__global__ void k(int* x) {\n    x[0] = cg::coalesced_threads().size();\n}\n" + MAIN,
     r"cooperative_groups::coalesced_threads\(\)", "4 of k.cu: x[0] = cg::coalesced_threads().size();"),
    ("cublas", "#include <cublas_v2.h>\n" + MAIN, r"cuBLAS", "1 of k.cu: #include <cublas_v2.h>"),
    ("curand", "#include <curand_kernel.h>\n" + MAIN, r"cuRAND", "1 of k.cu: #include <curand_kernel.h>"),
]


@pytest.mark.parametrize("source,feature,where", [p[1:] for p in PROBES], ids=[p[0] for p in PROBES])
def test_a_feature_not_emulated_is_named_with_the_students_line(tmp_path, source, feature, where):
    (tmp_path / "k.cu").write_text(source)
    with pytest.raises(cuda_build.NotEmulated) as failure:
        cuda_build.build_program(tmp_path, ["k.cu"])
    message = str(failure.value)
    assert re.match(feature + r"[^;]* is not emulated by the CPU runtime \(your line " + re.escape(where), message), message
    assert "error:" not in message and "No such file" not in message  # none of g++'s own words


def test_other_compile_errors_keep_the_compilers_words(tmp_path):
    (tmp_path / "k.cu").write_text("__global__ void k(float* x) {\n    int y = 1;\n    x[0] = undefined_name;\n}\n"
                                   + MAIN)
    with pytest.raises(cuda_build.BuildError) as failure:
        cuda_build.build_program(tmp_path, ["k.cu"])
    assert not isinstance(failure.value, cuda_build.NotEmulated)
    assert re.search(r"k.cu:3:\d+: error: .undefined_name. was not declared", str(failure.value)), str(failure.value)
    # the line g++ quotes is the student's line 3, not the rewritten file's (one line lower: its #line directive)
    assert "    3 |     x[0] = undefined_name;" in str(failure.value), str(failure.value)


STOPS = """\
#include <cstdio>
__global__ void child(float* x) { x[threadIdx.x] = 1.0f; }
__global__ void parent(float* x) {
    if (threadIdx.x == 0) child<<<1, 32>>>(x);
}
__global__ void trapping(float* x) {
    if (threadIdx.x == 7) __trap();
    x[threadIdx.x] = 2.0f;
}
int main() {
    float* x;
    cudaMalloc(&x, 32 * sizeof(float));
    MODE<<<1, 32>>>(x);
    cudaError_t err = cudaDeviceSynchronize();
    printf("%s: %s\\n", cudaGetErrorName(err), cudaGetErrorString(err));
    return 0;
}
"""


@pytest.mark.parametrize("mode,words", [
    ("parent", r"cudaErrorLaunchFailure: a kernel launched from a kernel \(dynamic parallelism\) is not emulated by "
               r"the CPU runtime \(your line 4, in thread \(0,0,0\) of block \(0,0,0\)\); launch it from host code"),
    ("trapping", r"cudaErrorLaunchFailure: __trap\(\) at k.cu:7 in thread \(7,0,0\) of block \(0,0,0\) stopped the "
                 r"kernel"),
])
def test_trap_and_a_launch_from_a_kernel_stop_the_launch_with_their_line(tmp_path, mode, words):
    (tmp_path / "k.cu").write_text(textwrap.dedent(STOPS).replace("MODE", mode))
    program = cuda_build.build_program(tmp_path, ["k.cu"])
    proc = subprocess.run([str(program)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and re.search(words, proc.stdout), proc.stdout + proc.stderr


def test_what_is_not_emulated_is_said_in_the_grading_s_language(tmp_path, monkeypatch):
    """The message, the feature and what to write instead come from the catalogs; the student's line and file stay
    as they are."""
    (tmp_path / "k.cu").write_text("#include <cublas_v2.h>\n" + MAIN)
    monkeypatch.setenv("GRADER_LANG", "ja")
    with pytest.raises(cuda_build.NotEmulated) as failure:
        cuda_build.build_program(tmp_path, ["k.cu"])
    message = str(failure.value)
    assert "cuBLAS は CPU ランタイムではエミュレートされません（k.cu のあなたの 1 行目：#include <cublas_v2.h>）" in message
    assert "行列積をカーネルとして書いてください" in message and "is not emulated" not in message, message
