"""`python -m grader cuda-samples PATH`: builds a sample from the files its CMakeLists.txt names (a .cu, a .cpp, a
header of Common/), runs it and reads its verdict. Checked on a stand-in checkout written here (NVIDIA's samples
are never part of this repository)."""

import argparse

from grader.dev import cuda_samples

KERNEL = """\
#include <cstdio>
#include <helper_check.h>
#include "scale.h"
__global__ void scale(float* x, float by = 2.0f) { x[threadIdx.x] *= by; }
int run_scale(float* host, int n) {
    float* d;
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    CHECK(cudaMemcpy(d, host, n * sizeof(float), cudaMemcpyHostToDevice));
    scale<<<1, n>>>(d);  // the default argument
    CHECK(cudaMemcpy(host, d, n * sizeof(float), cudaMemcpyDeviceToHost));
    return cudaFree(d) == cudaSuccess;
}
"""
MAIN = """\
#include <cstdio>
#include <cuda_runtime.h>
#include "scale.h"
int main() {
    float x[32];
    for (int i = 0; i < 32; ++i) x[i] = i;
    run_scale(x, 32);
    bool ok = x[31] == 62.0f;
    printf(ok ? "Test passed\\n" : "Test failed!\\n");
    return ok ? 0 : 1;
}
"""


def _checkout(root, main=MAIN):
    sample = root / "Samples" / "0_Introduction" / "vectorAdd"
    sample.mkdir(parents=True)
    (root / "Common").mkdir()
    (root / "Common" / "helper_check.h").write_text(
        "#define CHECK(call) do { if ((call) != cudaSuccess) return 0; } while (0)\n")
    (sample / "scale.h").write_text("int run_scale(float* host, int n);\n")
    (sample / "scale.cu").write_text(KERNEL)
    (sample / "main.cpp").write_text(main)
    (sample / "unused.cu").write_text("this file is not in add_executable, so it is never compiled\n")
    (sample / "CMakeLists.txt").write_text("add_executable(vectorAdd scale.cu main.cpp)\n")
    return sample


def test_sources_are_those_cmake_builds(tmp_path):
    assert cuda_samples.sources(_checkout(tmp_path)) == ["scale.cu", "main.cpp"]


def test_a_sample_that_passes(tmp_path):
    _checkout(tmp_path)
    outcome = cuda_samples.run_sample(tmp_path, "0_Introduction/vectorAdd", timeout=60)
    assert (outcome.built, outcome.ran, outcome.passed, outcome.first_error) == (True, True, True, "")


def test_a_sample_that_fails_its_check_and_one_that_does_not_build(tmp_path):
    _checkout(tmp_path, MAIN.replace("62.0f", "63.0f"))
    outcome = cuda_samples.run_sample(tmp_path, "0_Introduction/vectorAdd", timeout=60)
    assert (outcome.built, outcome.ran, outcome.passed, outcome.first_error) == (True, True, False, "Test failed!")
    (tmp_path / "Samples" / "0_Introduction" / "vectorAdd" / "main.cpp").write_text("int main() { return nope; }\n")
    outcome = cuda_samples.run_sample(tmp_path, "0_Introduction/vectorAdd", timeout=60)
    assert not outcome.built and "main.cpp:1" in outcome.first_error and "nope" in outcome.first_error


def test_the_command_prints_the_table_and_fails_unless_all_pass(tmp_path, capsys):
    _checkout(tmp_path)
    parser = argparse.ArgumentParser()
    cuda_samples.add_arguments(parser)
    assert cuda_samples.main(parser.parse_args([str(tmp_path), "--only", "vectorAdd"])) == 0
    out = capsys.readouterr().out
    assert "cuda-samples on the CPU runtime: 1/1 PASS" in out and "vectorAdd" in out
    assert cuda_samples.main(parser.parse_args([str(tmp_path), "--only", "matrixMul"])) == 1  # not in the checkout
    assert cuda_samples.main(parser.parse_args([str(tmp_path / "nothing")])) == 2
