"""The worker's bubblewrap box (grader/sandbox/bubblewrap.py), its uids (uids.py) and the fallback to the reduced
fence (isolation.py), seen from inside a real worker and from outside. The hostile submissions that attack it are
the adversarial corpus (test_adversarial.py)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

from grader.common.failures import StudentRaised
from grader.sandbox import bubblewrap, isolation, uids
from grader.sandbox.client import Submission
from helpers import ROOT

needs_a_box = pytest.mark.skipif(bubblewrap.probe() is not None, reason=f"no box here: {bubblewrap.probe()}")

LOOK_AROUND = textwrap.dedent("""
    import os, resource, socket
    import numpy as np
    def look(x):
        try:
            socket.create_connection(("127.0.0.1", 22), timeout=1)
            net = 1
        except OSError:
            net = 0
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
        return np.array([len(pids), os.getpid(), net, os.path.exists(ROOT_SEEN), os.access(".", os.W_OK),
                         resource.getrlimit(resource.RLIMIT_NPROC)[0], resource.getrlimit(resource.RLIMIT_NOFILE)[0],
                         len([k for k in os.environ if k.startswith("GRADER_") and k != "GRADER_WORKER_TOKEN"])],
                        dtype=np.int64)
""")


@needs_a_box
def test_inside_the_box_the_worker_sees_only_itself(make_submission):
    folder = make_submission(f"ROOT_SEEN = {str(ROOT / 'grader' / 'commands.py')!r}\n" + LOOK_AROUND)
    with Submission(folder, timeout=20) as sub:
        procs, pid, net, root_seen, writable, nproc, nofile, grader_vars = sub.call("look", np.ones(1))
    assert procs <= 3 and pid <= 3  # bwrap as pid 1, the worker, maybe a thread leader: nothing of ours
    assert net == 0 and root_seen == 0 and writable == 1
    assert nproc == isolation.PROCESS_LIMIT and nofile == isolation.FILE_LIMIT
    assert grader_vars == 0  # a cleared environment: none of the grader's settings
    assert isolation.describe().startswith("full")


@needs_a_box
def test_a_fork_bomb_stops_at_the_process_limit_and_costs_its_call(make_submission):
    folder = make_submission(textwrap.dedent("""
        import os
        def bomb(x):
            for _ in range(500):
                if os.fork() == 0:
                    os.execv("/bin/sleep", ["sleep", "600.777"])
            return x
        def fine(x):
            return x + 1
    """))
    with Submission(folder, timeout=20) as sub:
        with pytest.raises(StudentRaised, match="BlockingIOError"):
            sub.call("bomb", np.ones(1))
        assert sub.call("fine", np.ones(1))[0] == 2  # the same worker still answers
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _cmdline_has(p, "600.777")]


def _cmdline_has(pid, word):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return word.encode() in f.read().split(b"\0")
    except OSError:
        return False


def test_the_outside_check_fails_for_a_process_that_is_not_boxed():
    """verify() is what makes a box checked, not assumed: run on a process sharing all our namespaces, it says so."""
    here = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        problems = bubblewrap.verify(here.pid, "-c", bubblewrap.NAMESPACES, os.getuid())
    finally:
        here.kill()
        here.wait()
    assert [p for p in problems if "shares the grader's" in p] == [
        f"the worker shares the grader's {name} namespace" for name in bubblewrap.NAMESPACES]
    assert bubblewrap.verify(here.pid, "-c", ("net",), os.getuid() + 1)  # gone by now: not found is a problem too


@pytest.mark.skipif(not uids.is_root(), reason="worker uids are reserved as root only")
def test_uids_are_unique_among_live_workers_of_every_grading():
    held = [uids.claim() for _ in range(3)]
    other = subprocess.run([sys.executable, "-c", "from grader.sandbox import uids; print(uids.claim()[0])"],
                           cwd=ROOT, capture_output=True, text=True, check=True)  # another grading, meanwhile
    try:
        mine = {uid for uid, _ in held}
        assert len(mine) == 3 and int(other.stdout) not in mine
    finally:
        for _, fd in held:
            uids.release(fd)
    again, fd = uids.claim()
    uids.release(fd)
    assert uids.UID_BASE <= again < uids.UID_BASE + uids.UID_COUNT


REFUSING_BWRAP = """#!/bin/sh
echo "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2
exit 1
"""


@pytest.mark.skipif(not isolation.is_root(), reason="worker uids are given out as root only")
def test_a_worker_folder_left_by_a_killed_grading_is_removed_when_its_uid_comes_round(tmp_path):
    """Folders of the claimed uid go; of another worker uid, only when no live worker holds that uid's lock."""
    (mine, mine_fd), (live, live_fd), (stale, stale_fd) = uids.claim(), uids.claim(), uids.claim()
    uids.release(stale_fd)  # its grading was killed: no one holds its lock
    for name, uid in (("grader-worker-left", mine), ("grader-worker-live", live), ("grader-worker-stale", stale),
                      ("not-a-worker", mine), ("grader-worker-not-a-worker-uid", 0)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "attention.py").write_text("def row_softmax(x): ...\n")
        os.chown(tmp_path / name, uid, uid)
    try:  # `live`: a grading beside this one still holds its worker's uid
        uids.remove_left_behind(mine, tmp_path)
    finally:
        uids.release(mine_fd)
        uids.release(live_fd)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grader-worker-live", "grader-worker-not-a-worker-uid",
                                                          "not-a-worker"]


def test_where_namespaces_are_refused_grading_says_reduced_or_refuses(tmp_path):
    """Docker's default seccomp profile, simulated by a bwrap that fails as it fails there. A student's grade goes
    on in the fence and says so; asked to, it refuses. A class's batch refuses by default; with
    --allow-reduced-isolation it grades, and students see no test's output."""
    where = Path(tempfile.mkdtemp(prefix="refusing-bwrap-"))  # as root bwrap runs as a worker's uid: not in
    where.chmod(0o755)                                          # tmp_path, which only root may enter
    fake = where / "bwrap"
    fake.write_text(REFUSING_BWRAP)
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != isolation.POLICY_VAR}
    env["GRADER_BWRAP"] = str(fake)
    args = [sys.executable, "-m", "grader", "grade", "--submission", str(ROOT / "solutions"), "--exercise",
            "compute_dk", "--pictures", "none", "--results", str(tmp_path / "results.json")]
    graded = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert "isolation: reduced: bubblewrap cannot build a box here (bwrap: No permissions" in \
        " ".join(graded.stdout.split())
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["extra_data"]["isolation"].startswith("reduced: bubblewrap cannot build a box here")
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 0  # graded all the same
    assert {t["visibility"] for t in results["tests"]} == {"visible"}  # the student's own grading: nothing hidden
    refused = subprocess.run(args + ["--require-isolation"], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=300)
    assert refused.returncode == 2 and "isolation required but reduced: bubblewrap cannot" in refused.stderr
    assert "--allow-reduced-isolation" in refused.stderr
    (tmp_path / "class" / "ada").mkdir(parents=True)
    shutil.copy2(ROOT / "solutions" / "attention.py", tmp_path / "class" / "ada")
    batch = [sys.executable, "-m", "grader", "batch", str(tmp_path / "class"), "--jobs", "1"]
    refused = subprocess.run(batch, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "isolation required but reduced: bubblewrap cannot" in refused.stderr
    assert not (tmp_path / "class-results" / "ada" / "results.json").exists()
    allowed = subprocess.run(batch + ["--allow-reduced-isolation"], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=600)
    shutil.rmtree(where)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    results = json.loads((tmp_path / "class-results" / "ada" / "results.json").read_text())
    assert results["tests"] and {t["visibility"] for t in results["tests"]} == {"hidden"}
    assert "Graded with reduced isolation, as your instructor allowed" in results["output"]
