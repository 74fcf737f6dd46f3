"""One grade on every machine: where nvcc is missing, test_compiles_as_cuda is a failing 0 that says why, never a
skip, so the kernel's maximum is the same in the scorecard (make grade), results.json (Gradescope), GitHub
Classroom's payload and the nbgrader notebook's test cell (fixed at release). GRADER_NVCC=none hides nvcc. And the
kernel is graded on the CPU runtime wherever it is: asking for the GPU (GRADER_KERNEL_DEVICE=gpu) where there is
none costs no points, only a note (it made every kernel test "cannot be graded on this machine" before)."""

import json
import os
import subprocess
import sys

from grader.dev.controls import per_exercise
from grader.report.classroom import to_classroom
from helpers import ROOT

NOTEBOOK_POINTS = """
import json
from grader.course.notebook_source import build_notebook, exercise_points
cells = build_notebook(exercise_points())["cells"]
print(json.dumps({c["metadata"]["nbgrader"]["grade_id"]: c["metadata"]["nbgrader"]["points"]
                  for c in cells if c["metadata"].get("nbgrader", {}).get("grade")}))
"""


def test_without_nvcc_the_maximum_is_the_notebooks(tmp_path):
    env = {**os.environ, "GRADER_NVCC": "none", "GRADER_KERNEL_DEVICE": "gpu"}  # no nvcc, so no GPU either
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", "--submission", ROOT / "solutions", "--suite",
                           "all", "--exercise", "cuda_kernel", "--results", out, "--report-dir", tmp_path / "report"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(out.read_text())
    earned, possible = per_exercise(results)["cuda_kernel"]
    compile_check = [t for t in results["tests"] if "test_compiles_as_cuda" in t["name"]]
    assert len(compile_check) == 1 and compile_check[0]["max_score"] == 1 and compile_check[0]["score"] == 0
    assert compile_check[0]["status"] == "failed"
    assert "could not run here: nvcc is hidden here (GRADER_NVCC=none)" in compile_check[0]["output"]
    assert earned == possible - 1  # every other kernel test passes: the reference is right

    notebook = json.loads(subprocess.run([sys.executable, "-c", NOTEBOOK_POINTS], cwd=ROOT, capture_output=True,
                                         text=True, timeout=300, check=True).stdout)
    assert notebook["test_cuda_kernel"] == possible  # the notebook's maximum, fixed at release
    assert to_classroom(results)["max_score"] == possible  # GitHub Classroom sums results.json's maxima
    card = " ".join(proc.stdout.split())
    assert f"cuda_kernel │ {earned:g} / {possible:g}" in card  # make grade's scorecard
    assert ("on the GPU too: not run (not graded): GRADER_KERNEL_DEVICE=gpu, but this machine has no GPU that "
            "nvidia-smi lists, or no nvcc") in card
