"""`python -m grader gpu-check` (grader/dev/gpu_check*.py): the one run of issues 14 and 15's GPU checks. No GPU
has been lent to this project yet, so here it runs its CPU side and its nvcc builds and says what it skipped;
its comparisons are shown to flag a GPU output, a sample's verdict or a control's score that differs."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from grader.dev import gpu_check_kernels as kernels, gpu_check_programs as programs, gpu_check_report as report_io
from helpers import ROOT

EXPECTED = (programs.CONFORMANCE / "atomics.expected").read_text()
NO_GPU_HERE = shutil.which("nvidia-smi") is None


def _ran(output, status=0):
    return programs.Side(built=True, ran=True, exit_status=status, output=output)


def _report(parts, gpu=True):
    return {"started": "now", "seconds": 1.0, "gpu": gpu, "gpu_reason": "", "machine": {"gpu": "a test"},
            "skipped": [], "parts": parts}


def test_a_gpu_output_unlike_the_expected_one_is_a_mismatch_with_its_line():
    changed = EXPECTED.replace(EXPECTED.splitlines()[1], "something else", 1)
    row = programs.judge_conformance("atomics", _ran(EXPECTED), _ran(changed))
    assert row["mismatch"] and row["agree"] is False and row["cpu"]["passed"] and not row["gpu"]["passed"]
    assert row["gpu"]["problem"].startswith("line 2: 'something else' where the other has")
    assert row["difference"].startswith("line 2: 'something else'")
    text = report_io.markdown(dict(_report({"conformance": {"status": "ran", "seconds": 1, "rows": [row]}}),
                                   mismatches=1))
    assert "| atomics | PASS (0.0 s) | FAIL: line 2: 'something else'" in text and "**MISMATCH**" in text


def test_the_same_output_on_both_devices_agrees():
    row = programs.judge_conformance("atomics", _ran(EXPECTED), _ran(EXPECTED))
    assert not row["mismatch"] and row["agree"] is True and row["gpu"]["passed"]
    assert programs.judge_conformance("atomics", _ran(EXPECTED), _ran(EXPECTED, status=1))["mismatch"]


def test_a_sample_verdict_that_differs_is_a_mismatch_but_its_timings_are_not():
    cpu = _ran("Device 0: the CPU runtime\nTime = 12.5 msec\nresult 42\nTest passed")
    gpu = _ran("Device 0: NVIDIA H200\nTime = 0.01 msec\nresult 42\nTest passed")
    cpu.passed = gpu.passed = True
    row = programs.judge_sample("vectorAdd", cpu, gpu)
    assert not row["mismatch"] and row["difference"] == ""
    gpu.passed = False
    assert programs.judge_sample("vectorAdd", cpu, gpu)["mismatch"]


def test_a_control_scored_differently_with_the_gpu_is_a_mismatch():
    graded = {"kernel_no_scale": {"totals": {"cuda_kernel": [3, 14]}, "problems": [], "gpu_notes": []}}
    cpu = {"kernel_no_scale": {"totals": {"cuda_kernel": [3, 14]}}}
    assert not kernels.compare_controls(["kernel_no_scale"], graded, cpu, {"kernel_no_scale": 3})[0]["mismatch"]
    cpu["kernel_no_scale"]["totals"]["cuda_kernel"] = [4, 14]
    row = kernels.compare_controls(["kernel_no_scale"], graded, cpu, {"kernel_no_scale": 3})[0]
    assert row["mismatch"] and "**MISMATCH**: the two scores differ" in "\n".join(report_io._controls_table(
        {"device": "gpu", "rows": [row]}))


def _gpu_check(out, *args):
    return subprocess.run([sys.executable, "-m", "grader", "gpu-check", "--out", str(out), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(not NO_GPU_HERE, reason="this machine has a GPU: the report here would have GPU figures")
def test_without_a_gpu_it_says_so_runs_the_cpu_side_and_flags_a_doctored_cpu_output(tmp_path):
    first = _gpu_check(tmp_path / "a", "--parts", "conformance,controls", "--only", "atomics", "kernel_compile_error")
    assert first.returncode == 0, first.stdout + first.stderr
    report = json.loads((tmp_path / "a" / report_io.REPORT_JSON).read_text())
    text = (tmp_path / "a" / report_io.REPORT_MD).read_text()
    assert report["gpu"] is False and "**no GPU: nvidia-smi is not installed" in text
    assert "every run on the GPU: no GPU" in report["skipped"][0]
    assert {"timing: not chosen (--parts)", "samples: not chosen (--parts)"} <= set(report["skipped"])
    (row,) = report["parts"]["conformance"]["rows"]
    assert row["cpu"]["passed"] and row["cpu"]["output"] == EXPECTED  # the CPU runtime really ran it
    assert row["gpu"]["built"] and not row["gpu"]["ran"] and row["gpu"]["problem"] == "not run: no GPU"
    assert "| atomics | PASS" in text and "built, not run: no GPU" in text
    (control,) = report["parts"]["controls"]["rows"]
    assert (control["name"], control["score"], control["possible"], control["mismatch"]) == \
        ("kernel_compile_error", 0, 14, False)
    # the CPU side read back from that report (--cpu-from), one line doctored: the check must flag it
    row["cpu"]["output"] = EXPECTED.replace(EXPECTED.splitlines()[0], "a different first line")
    doctored = tmp_path / "doctored.json"
    doctored.write_text(json.dumps(report))
    second = _gpu_check(tmp_path / "b", "--parts", "conformance", "--only", "atomics", "--cpu-from", str(doctored))
    assert second.returncode == 1, second.stdout + second.stderr
    text = (tmp_path / "b" / report_io.REPORT_MD).read_text()
    assert f"comes from {doctored}" in text and "FAIL: line 1: 'a different first line'" in text
    assert "Mismatches: 1" in text


def test_the_device_script_is_valid_bash():
    assert subprocess.run(["bash", "-n", str(ROOT / "grader" / "dev" / "gpu_check_device.sh")]).returncode == 0


def test_controls_leave_the_box_only_when_the_box_alone_hid_the_gpu():
    failed_in_box = {"problem": "through the grader's worker: no CUDA-capable device", "gpu_ms": 0.2}
    assert kernels.box_hides_the_gpu([failed_in_box], "bwrap: full: ...")
    assert not kernels.box_hides_the_gpu([failed_in_box], "fence: reduced: ...")
    assert not kernels.box_hides_the_gpu([dict(failed_in_box, gpu_ms=None)], "bwrap: full: ...")
    assert not kernels.box_hides_the_gpu([{"problem": "", "gpu_ms": 0.2}], "bwrap: full: ...")


def test_the_carry_takes_this_machines_boost_packages_and_counts_the_working_tree():
    from grader.dev import gpu_check_carry as carry
    if subprocess.run(["dpkg", "-S", carry.BOOST_HEADER], capture_output=True).returncode != 0:
        pytest.skip("Boost.Context is not installed from Debian's packages here")
    names = carry.boost_packages()
    assert len(names) == 3 and all(n.startswith("libboost") for n in names), names
    assert 0 < carry.working_tree_bytes() < 64 << 20  # source, not build outputs


@pytest.mark.skipif(not NO_GPU_HERE or shutil.which("nvcc") is None, reason="needs nvcc and no real GPU")
def test_a_gpu_that_nvidia_smi_lists_but_no_driver_runs_gives_failures_not_figures(tmp_path):
    """A stand-in nvidia-smi (listing a GPU this machine lacks) walks the GPU code paths: the nvcc build runs for
    real and so does the CUDA runtime, which finds no driver; the GPU column must fail and be flagged."""
    smi = tmp_path / "bin" / "nvidia-smi"
    smi.parent.mkdir()
    smi.write_text('#!/bin/sh\ncase "$*" in *query-gpu*) echo "NVIDIA Stand-in, 580.00, 9.0, 1 MiB";; '
                   '*) echo "GPU 0: NVIDIA Stand-in";; esac\n')
    smi.chmod(0o755)
    env = dict(os.environ, PATH=f"{smi.parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run([sys.executable, "-m", "grader", "gpu-check", "--out", str(tmp_path / "out"), "--parts",
                           "conformance", "--only", "atomics"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((tmp_path / "out" / report_io.REPORT_JSON).read_text())
    (row,) = report["parts"]["conformance"]["rows"]
    assert report["gpu"] is True and report["arch"] == "sm_90" and row["gpu"]["ran"] and not row["gpu"]["passed"]
    assert row["cpu"]["passed"] and row["mismatch"]


def test_a_sample_given_by_a_relative_path_builds_for_both_devices(tmp_path, monkeypatch):
    """The device script passes .gpucheck/cuda-samples: nvcc runs in the sample's folder, so the path must be made
    absolute first (a stand-in checkout, as test_cuda_samples_command.py writes it)."""
    from test_cuda_samples_command import _checkout
    _checkout(tmp_path / "samples")
    monkeypatch.chdir(tmp_path)
    (row,) = programs.samples("samples", {"vectorAdd"}, tmp_path, arch="sm_90", gpu=False, timeout=60, jobs=2)
    assert row["cpu"]["passed"] and row["cpu"]["output"] == "Test passed\n", row
    assert row["gpu"]["built"] and row["gpu"]["problem"] == "not run: no GPU", row


NCU_CSV = '''==PROF== Connected to process 4242 (/usr/bin/python3)
==PROF== Profiling "flash_kernel" - 0: 0%....50%....100% - 3 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","python3","127.0.0.1","flash_kernel(const float *, const float *, const float *, float *, int, int)","1","7","(64, 1, 1)","(16, 12, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","250,112"
"0","4242","python3","127.0.0.1","flash_kernel(const float *, const float *, const float *, float *, int, int)","1","7","(64, 1, 1)","(16, 12, 1)","0","9.0","Command line profiler metrics","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","","393,216"
"0","4242","python3","127.0.0.1","flash_kernel(const float *, const float *, const float *, float *, int, int)","1","7","(64, 1, 1)","(16, 12, 1)","0","9.0","Command line profiler metrics","l1tex__t_requests_pipe_lsu_mem_global_op_st.sum","","73,728"
"0","4242","python3","127.0.0.1","flash_kernel(const float *, const float *, const float *, float *, int, int)","1","7","(64, 1, 1)","(16, 12, 1)","0","9.0","Command line profiler metrics","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","sector","1,000,000"
"0","4242","python3","127.0.0.1","flash_kernel(const float *, const float *, const float *, float *, int, int)","1","7","(64, 1, 1)","(16, 12, 1)","0","9.0","Command line profiler metrics","sm__maximum_warps_per_active_cycle_pct","%","18.75"
==PROF== Disconnected from process 4242
'''


def test_nsight_compute_s_csv_is_read_per_kernel_and_compared_count_by_count():
    """Nsight Compute's --csv --print-units base output (its prefix lines skipped, thousands separators read):
    requests of loads and stores added as the kernel report adds them; a count 10% or more off is a mismatch."""
    from grader.dev import gpu_check_profile as counters
    found = counters.parse_ncu(NCU_CSV)["flash_kernel"]
    assert found["global requests"] == 466_944 and found["sectors"] == 1_000_000
    assert found["seconds"] == pytest.approx(250.112e-6) and found["theoretical occupancy %"] == 18.75
    cpu = {"flash_kernel": {"global requests": 466_944, "sectors": 3_244_032, "shared requests": 0, "wavefronts": 0}}
    verdicts = {count: off for _, count, _, _, off in counters.compare(cpu, {"flash_kernel": found})}
    assert verdicts == {"global requests": False, "sectors": True, "shared requests": False, "wavefronts": False}


def test_without_a_gpu_the_profile_part_gives_the_runtime_s_counts_and_says_the_gpu_did_not_run():
    from grader.dev import gpu_check_profile as counters
    rows = counters.rows(arch="sm_90", gpu=None)
    tiled = next(r for r in rows if r["name"].startswith("reference version 2"))
    assert tiled["problem"] == counters.NO_GPU and tiled["gpu"] is None and not tiled["mismatch"]
    assert tiled["cpu"]["flash_kernel"]["global requests"] == 466_944 and round(tiled["bound_us"], 1) == 104.0
    assert "| reference version 2 (tiled) | 12x1024x64 | 104.0 | - |" in "\n".join(counters.table({"rows": rows}))
