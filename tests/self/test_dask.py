"""`python -m grader batch --scheduler`: a class graded on a real Dask LocalCluster of 2 worker processes (one
grading each), one worker killed while it grades; every student must still get the points its control states
(the points local grading gives: tests/self/test_controls.py, test_adversarial.py), and a rerun skips them all.
(`autograde --scheduler` sends its test cells' gradings through the same Cluster: docs/dask.md.) A cluster started
and a class graded twice on it: it runs with `make test-deploy` (GRADER_DEPLOY_TEST=1), which CI runs."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import psutil
import pytest
from distributed import Client, LocalCluster

from grader.common.layout import EXERCISES, SUBMISSION_FILE
from grader.course import dask_tasks
from grader.dev import controls
from helpers import ROOT

pytestmark = pytest.mark.skipif(not os.environ.get("GRADER_DEPLOY_TEST"),
                                reason="the deployments end to end: make test-deploy (GRADER_DEPLOY_TEST=1)")

# a known-wrong submission (its exercises' points, full marks in the others) and the corpus's submission that sleeps
# 60 s at import (0 for every Python exercise, the kernel in full): its worker is killed while its grading waits in
# silence on the sleeping import, so the grading process outlives the worker only if nothing kills it (its pipe to
# the dead worker would end it only at its next line of output, when the call times out: CALL_TIMEOUT)
CLASS = ("softmax_wrong_axis", "slow_import")
KILLED = "slow_import"
CALL_TIMEOUT = 7
DEATH_WAIT = 2  # seconds the killed worker's processes get to die: ending well before CALL_TIMEOUT, so a grading that
# outlived its worker is still there to be seen (its import started about 1 s before the kill)
BATCH_TIMEOUT = 600


def _declared_scores(control, maximum):
    """{exercise: points} the control must get, given each exercise's maximum."""
    return {ex: control.scores.get(ex, maximum[ex]) for ex in EXERCISES}


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as local, \
            Client(local) as client:
        yield local, client


def _cmdline(process):
    try:
        return " ".join(process.cmdline())
    except psutil.Error:  # gone meanwhile
        return ""


def _running(process):
    """Not ended. A zombie has ended and runs nothing: it only waits for its reaper (init, once its parent is
    killed). Once, on a busy machine, three processes were still listed DEATH_WAIT seconds after the kill, none with
    a command line to read: zombies not yet collected, or gone just after."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:  # gone meanwhile
        return False


def _kill_a_worker_mid_task(client, proc, student):
    """Wait until student's grading has a sandbox worker (importing the submission), then SIGKILL the Dask worker
    running it. Returns (its address, the command lines of the processes it had started still alive DEATH_WAIT
    seconds later)."""
    while proc.poll() is None:
        for address, keys in client.processing().items():
            if any(k.startswith(f"grade-{student}-") for k in keys):
                pid = client.run(os.getpid, workers=[address])[address]
                children = psutil.Process(pid).children(recursive=True)
                if any("sandbox/worker.py" in _cmdline(c) for c in children):
                    time.sleep(1)  # in the import's sleep: CALL_TIMEOUT - 1 s of silence left
                    children = psutil.Process(pid).children(recursive=True)
                    os.kill(pid, signal.SIGKILL)
                    _, alive = psutil.wait_procs(children, timeout=DEATH_WAIT)
                    return address, [_cmdline(c) or f"pid {c.pid}" for c in alive if _running(c)]
        time.sleep(0.2)
    pytest.fail(f"the batch ended before {student}'s grading started a sandbox worker")


@pytest.fixture(scope="module")
def graded(cluster, tmp_path_factory):
    local, client = cluster
    top = tmp_path_factory.mktemp("dask")
    known = {c.name: c for c in controls.all_controls() + controls.corpus_controls()}
    for name in CLASS:
        shutil.copytree(controls.build(known[name]), top / "class" / name,
                        ignore=lambda d, names: [n for n in names if n not in (SUBMISSION_FILE, "microgpt_cuda.cu")])
    cmd = [sys.executable, "-m", "grader", "batch", str(top / "class"), "--scheduler", local.scheduler_address,
           "--suite", "all", "--timeout", str(CALL_TIMEOUT)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        killed = _kill_a_worker_mid_task(client, proc, KILLED)
        out, err = proc.communicate(timeout=BATCH_TIMEOUT)
    finally:
        proc.kill()
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=BATCH_TIMEOUT)
    return top / "class-results", killed, (proc.returncode, out, err), again, known


def test_every_student_gets_its_controls_score_on_the_cluster(graded):
    results, _, (code, out, err), _, known = graded
    assert code == 0, out + err
    assert f"[{len(CLASS)}/{len(CLASS)}]" in out and "on the Dask cluster" in out
    for name in CLASS:
        data = json.loads((results / name / "results.json").read_text())
        got, maximum = {ex: 0.0 for ex in EXERCISES}, {ex: 0.0 for ex in EXERCISES}
        for test in data["tests"]:
            got[test["tags"][0]] += test["score"]
            maximum[test["tags"][0]] += test["max_score"]
        assert all(maximum.values()) and any(t["visibility"] == "after_published" for t in data["tests"])  # hidden too
        assert got == _declared_scores(known[name], maximum), name
        scorecard = (results / name / "scorecard.txt").read_text()
        assert "dask-grade-" not in scorecard  # the worker's temporary folders are not named to the instructor
    for picture in (results / "softmax_wrong_axis" / "pictures").glob("*.png"):
        assert picture.stat().st_size > 0


def test_a_killed_worker_s_student_is_graded_elsewhere_and_its_grading_dies_with_it(graded, cluster):
    results, (address, alive), (code, out, _), _, _ = graded
    student = KILLED
    _, client = cluster
    assert address not in client.scheduler_info(n_workers=-1)["workers"]  # the killed worker is gone
    line = next(line for line in out.splitlines() if re.match(rf"\[\d/\d\] {student}: ", line))
    assert "done" in line and address not in line, line  # graded to the end by another worker
    assert json.loads((results / student / "results.json").read_text())["tests"]
    # the grading process the killed worker had started died with it (PR_SET_PDEATHSIG), and its box with it
    assert alive == []


def test_a_rerun_skips_every_graded_student(graded):
    _, _, _, again, _ = graded
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.count("unchanged, skipped") == len(CLASS)


def test_a_worker_with_another_grader_grades_nothing():
    """A worker whose checkout differs would grade by other rules: it refuses and says what to do."""
    settings = dask_tasks.Settings(digest="0" * 64, hidden_seed=None, isolation_policy="best-effort", at_once={})
    graded = dask_tasks.grade_student_on_worker("someone", {SUBMISSION_FILE: b"x = 1\n"}, "public", 10.0, None,
                                                  settings)
    assert not graded.ok and graded.files == {}
    assert "differs from the instructor's grader: update it to the same commit" in graded.note


def test_an_unreachable_scheduler_is_one_clear_line(tmp_path):
    (tmp_path / "class" / "someone").mkdir(parents=True)
    env = dict(os.environ, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="2s")  # dask's own setting, 30 s by default
    proc = subprocess.run([sys.executable, "-m", "grader", "batch", str(tmp_path / "class"),
                           "--scheduler", "tcp://127.0.0.1:9"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 2
    assert proc.stderr.startswith("grader: cannot reach the Dask scheduler at tcp://127.0.0.1:9"), proc.stderr
