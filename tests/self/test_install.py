"""Every install step gets torch's CPU wheel: the Makefile's, the student repository's (which the Classroom
workflow runs) and Gradescope's setup.sh (test_batch.py) each install torch first, alone, from the CPU-only index
of requirements/torch-cpu.txt; and the venv the tests run in, made by the Makefile, holds no CUDA library. The two
Makefiles then install the rest with uv, or with pip where uv cannot."""

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


def _install_commands(folder, tmp_path, uv_installs):
    """The commands `make venv` runs in folder, recorded by a stand-in venv Python and a stand-in uv that log their
    arguments (python: ..., uv: ...); the uv fails when uv_installs is false, as where it cannot reach an index."""
    venv, log = tmp_path / "venv", tmp_path / "log"
    (venv / "bin").mkdir(parents=True)
    for name, code in (("python", 0), ("uv", 0 if uv_installs else 1)):
        fake = venv / "bin" / name
        fake.write_text(f'#!/bin/sh\necho "{name}: $*" >> {log}\nexit {code}\n')
        fake.chmod(0o755)
    done = subprocess.run(["make", "-s", "venv", f"VENV={venv}"], cwd=folder, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in log.read_text().splitlines() if " install " in f"{line} "]


@pytest.mark.parametrize("uv_installs", [True, False], ids=["uv", "uv cannot"])
@pytest.mark.parametrize("where", ["checkout", "student repository"])
def test_make_venv_installs_torch_alone_from_the_cpu_index_before_the_rest(where, uv_installs, tmp_path):
    folder = ROOT
    if where == "student repository":
        folder = student_repo.build_student_repo(tmp_path / "student")
    commands = _install_commands(folder, tmp_path, uv_installs)
    index = "requirements/torch-cpu.txt" if folder == ROOT else "torch-cpu.txt"
    uv_pin = "requirements/uv.txt" if folder == ROOT else "uv.txt"
    torch, uv, *rest = commands
    assert torch.startswith("python: -m pip install"), commands
    assert torch.endswith(f"--no-deps --retries 2 -r {index} torch=={PIN}"), torch
    assert uv.startswith("python: -m pip install") and uv.endswith(f"-r {uv_pin}"), uv
    # the rest: by uv into the venv's Python, or by pip after uv failed; never from torch's CPU-only index
    expected = ["uv: pip install"] + ([] if uv_installs else ["python: -m pip install"])
    assert [r[:len(e)] for r, e in zip(rest, expected)] == expected and len(rest) == len(expected), commands
    assert all(r.endswith("-r requirements.txt") and "--index-url" not in r for r in rest), rest
    assert f"--python {tmp_path / 'venv' / 'bin' / 'python'}" in rest[0], rest[0]
