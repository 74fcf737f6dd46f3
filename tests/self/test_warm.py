"""The warm grading server (grader/warm): after the first `grade --warm` (make grade), gradings run in a fork of
a process that has imported everything, with a worker started ahead, and grade exactly as a cold grading does;
the server gets out of the way when the checkout changes, on Ctrl-C, on --stop and with GRADER_WARM=off."""

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from grader.common.layout import REFERENCE, SUBMISSION_FILE
from grader.dev.controls import Control, mutate
from grader.warm import client
from helpers import ROOT

SERVER_START = 60.0  # seconds a new server may take to import and collect on a busy 2-core machine


@pytest.fixture
def warm_env():
    """An environment whose warm server is this test's own (a server's name hashes the GRADER_ variables), with no
    GRADER_PROFILE, as a student's shell has none (grade turns it on for its own workers: the server it starts must
    still be the one the next grading looks for)."""
    env = {k: v for k, v in os.environ.items() if k not in ("GRADER_WARM", "GRADER_PROFILE")}
    env["GRADER_WARM_TEST"] = uuid.uuid4().hex
    yield env
    subprocess.run([sys.executable, "-m", "grader", "warm-server", "--stop"], cwd=ROOT, env=env, capture_output=True)


def _grade(env, folder, tmp_path, *extra, run="grade"):
    results, timings = tmp_path / f"{run}.results.json", tmp_path / f"{run}.timings.json"
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", "--warm", "--submission", str(folder),
                           "--pictures", "none", "--results", str(results), "--timings", str(timings), *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(results.read_text()), json.loads(timings.read_text())["warm"], proc.stdout


def _server_up(env, timeout=SERVER_START):
    path = client.socket_path(env)
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"no warm server listened at {path} within {timeout:g} s"
        time.sleep(0.2)


def _graded(results):
    """What a grading decided, test by test: everything but the time it took."""
    return [(t["name"], t["score"], t["max_score"], t["status"], t["output"], t.get("extra_data"))
            for t in results["tests"]], results["score"], results["extra_data"]["isolation"]


def _wrong_axis(tmp_path):
    control = Control.load(ROOT / "solutions" / "wrong" / "softmax_wrong_axis.py")
    folder = tmp_path / "wrong_axis"
    folder.mkdir()
    (folder / SUBMISSION_FILE).write_text(mutate(REFERENCE.read_text(), control.source))
    return folder


def test_a_warm_grading_decides_what_a_cold_one_does_and_a_changed_checkout_is_graded_cold(warm_env, tmp_path):
    folder = _wrong_axis(tmp_path)
    cold, was_warm, cold_card = _grade(warm_env, folder, tmp_path, "--exercise", "row_softmax", run="cold")
    assert was_warm == 0
    _server_up(warm_env)
    warm, was_warm, warm_card = _grade(warm_env, folder, tmp_path, "--exercise", "row_softmax", run="warm")
    assert was_warm == 1, "the second grading did not run in the warm server"
    assert _graded(warm) == _graded(cold)
    assert 0 < warm["score"] < sum(t["max_score"] for t in warm["tests"])  # the control's failures, shown warm
    assert "softmax over the wrong axis" in warm_card
    assert warm_card.replace("warm.results", "cold.results") == cold_card
    assert _graded(warm)[2].startswith("full") or not _graded(cold)[2].startswith("full")
    # a change to the grader's code under a running server: it refuses, the grading runs cold, a new server starts
    touched = ROOT / "grader" / "warm" / "__init__.py"
    before = touched.stat()
    try:
        os.utime(touched, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
        after, was_warm, _ = _grade(warm_env, folder, tmp_path, "--exercise", "row_softmax", run="changed")
        assert was_warm == 0 and _graded(after) == _graded(cold)
        time.sleep(1.0)  # the stale server's exit, then the new one's start
        _server_up(warm_env)
        again, was_warm, _ = _grade(warm_env, folder, tmp_path, "--exercise", "row_softmax", run="again")
        assert was_warm == 1 and _graded(again) == _graded(cold)
        # a standby maps the cache files the warm grading before it read (grader/judge/mapped_files.py), unless
        # its grading comes first (a grading never waits for that): given a student's pause, one that had them
        for attempt in range(3):
            time.sleep(2.0)
            paused, was_warm, _ = _grade(warm_env, folder, tmp_path, "--exercise", "row_softmax", run="paused")
            assert was_warm == 1 and _graded(paused) == _graded(cold)
            if json.loads((tmp_path / "paused.timings.json").read_text()).get("bytes_mapped_ahead", 0) > 0:
                break
        else:
            pytest.fail("no warm grading found the cache files of the one before it mapped ahead")
    finally:
        os.utime(touched, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_ctrl_c_reaches_the_warm_grading_and_stop_and_off_end_the_server(warm_env, tmp_path):
    _grade(warm_env, ROOT / "solutions", tmp_path, "--exercise", "compute_dk", run="first")
    _server_up(warm_env)
    looping = tmp_path / "looping"
    looping.mkdir()
    (looping / SUBMISSION_FILE).write_text(REFERENCE.read_text().replace(
        "def row_softmax(scores):\n", "def row_softmax(scores):\n    while True:\n        pass\n", 1))
    proc = subprocess.Popen([sys.executable, "-m", "grader", "grade", "--warm", "--submission", str(looping),
                             "--exercise", "row_softmax", "--pictures", "none"], cwd=ROOT, env=warm_env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as in a terminal
    time.sleep(2.0)  # the call is running: its time limit (5 s at least) is far off
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    # interrupted, not run to the loop's time limit (pytest says INTERRUPTED if it had started, else the exit is 130)
    assert proc.returncode != 0 and "timed out after" not in out, out
    assert "INTERRUPTED" in out or proc.returncode == 130, out
    stopped = subprocess.run([sys.executable, "-m", "grader", "warm-server", "--stop"], cwd=ROOT, env=warm_env,
                             capture_output=True, text=True)
    assert "stopped the warm grading server" in stopped.stdout, stopped.stdout + stopped.stderr
    path = client.socket_path(warm_env)
    deadline = time.monotonic() + 10
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not path.exists()
    off = dict(warm_env, GRADER_WARM="off")
    _, was_warm, _ = _grade(off, ROOT / "solutions", tmp_path, "--exercise", "compute_dk", run="off")
    time.sleep(3.0)
    assert was_warm == 0 and not path.exists(), "GRADER_WARM=off started a server"


def test_a_notebook_test_cell_is_graded_warm_as_it_is_cold(warm_env, tmp_path):
    """A notebook's test cell runs `python -m grader cell --warm` (grader/student/notebook.py): the first starts the
    server, the next cells are graded in it, with the same report and score."""
    folder = _wrong_axis(tmp_path)

    def cell(run):
        out = tmp_path / f"{run}.json"
        proc = subprocess.run([sys.executable, "-m", "grader", "cell", "--warm", "--submission", str(folder),
                               "--exercise", "row_softmax", "--json", str(out)], cwd=ROOT, env=warm_env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        verdict = json.loads(out.read_text())
        report = proc.stdout.rstrip().rpartition("\n")[0]  # the last line is the verdict, with "warm" in it
        return verdict.pop("warm"), verdict, report

    was_warm, cold, cold_report = cell("cold")
    assert was_warm is False
    _server_up(warm_env)
    was_warm, warm, warm_report = cell("warm")
    assert was_warm is True, "the second test cell was not graded by the warm server"
    assert warm == cold and 0 < warm["score"] < warm["max_score"], (warm, cold)
    assert warm_report == cold_report and "softmax over the wrong axis" in warm_report
