"""Every install step gets torch's CPU wheel: the Makefile's, the student repository's (which the Classroom
workflow runs) and Gradescope's setup.sh (test_batch.py) each install torch first, alone, from the CPU-only index
of requirements/torch-cpu.txt; and the venv the tests run in, made by the Makefile, holds no CUDA library."""

import importlib.metadata
import re
import subprocess
import sys

import pytest

from grader.course import student_repo
from helpers import ROOT

PIN = re.search(r"^torch==(\S+)", (ROOT / "requirements" / "grading.txt").read_text(), re.M).group(1)
CUDA_LIBRARIES = re.compile(r"^(nvidia-(cudnn|cublas|cufft|curand|cusolver|cusparse|nccl|nvshmem)|triton)", re.I)


def test_the_index_is_pytorch_s_cpu_only_one():
    lines = [line for line in (ROOT / "requirements" / "torch-cpu.txt").read_text().splitlines()
             if line and not line.startswith("#")]
    assert lines == ["--index-url https://download.pytorch.org/whl/cpu"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the CUDA build is the plain index's Linux wheel")
def test_the_venv_has_the_cpu_torch_and_no_cuda_library():
    names = sorted(d.metadata["Name"] for d in importlib.metadata.distributions())
    assert [n for n in names if CUDA_LIBRARIES.match(n)] == []
    assert importlib.metadata.version("torch") == f"{PIN}+cpu"
    assert not [r for r in importlib.metadata.requires("torch") or () if CUDA_LIBRARIES.match(r)]


def _install_commands(folder, tmp_path):
    """The commands `make venv` runs in folder, recorded by a stand-in venv Python that logs its arguments."""
    venv, log = tmp_path / "venv", tmp_path / "log"
    (venv / "bin").mkdir(parents=True)
    fake = venv / "bin" / "python"
    fake.write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    fake.chmod(0o755)
    done = subprocess.run(["make", "-s", "venv", f"VENV={venv}"], cwd=folder, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in log.read_text().splitlines() if line.startswith("-m pip install")]


@pytest.mark.parametrize("where", ["checkout", "student repository"])
def test_make_venv_installs_torch_alone_from_the_cpu_index_before_the_rest(where, tmp_path):
    folder = ROOT
    if where == "student repository":
        folder = student_repo.build_student_repo(tmp_path / "student")
    torch, rest = _install_commands(folder, tmp_path)
    index = "requirements/torch-cpu.txt" if folder == ROOT else "torch-cpu.txt"
    assert torch.endswith(f"--no-deps --retries 2 -r {index} torch=={PIN}"), torch
    assert rest.endswith("-r requirements.txt") and "--index-url" not in rest
