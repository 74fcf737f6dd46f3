"""The adversarial corpus (solutions/adversarial/): submissions that attack the grader. Each must get exactly its
score with its message, no process of theirs may outlive grading, and nothing they tried to read or write outside
their folder may have happened.

Grading 14 hostile submissions, with the timeouts they trigger, takes minutes on 2 cores: more than `make test`
may take, so these run with `make test-corpus` (GRADER_CORPUS_TEST=1), which CI (.ci/run) runs after `make test`."""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from grader.sandbox import isolation
from grader.dev.controls import ADVERSARIAL, BUILD, CORPUS_TIMEOUT, corpus_controls, verdict
from helpers import ROOT, run_grader

pytestmark = pytest.mark.skipif(not os.environ.get("GRADER_CORPUS_TEST"),
                                reason="the adversarial corpus runs with `make test-corpus` (CI runs it)")
CORPUS = [c.name for c in corpus_controls()]
STOLEN = [ROOT / "build" / "stolen-by-system.txt", ROOT / "build" / "stolen-by-fopen.txt"]


def _processes_with(argument):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if argument.encode() in f.read().split(b"\0"):
                    found.append(int(pid))
        except OSError:
            pass
    return found


LISTEN_PORT = 47931  # connects_to_localhost and kernel_host_searches_the_machine try to reach it
FORGED = "/tmp/results.json"  # forged_results_json writes it: only a box with a private /tmp keeps it in
FILLER = "grader-disk-filler-"  # fills_the_disk's files, in its folder and /tmp


class Listener:
    """A TCP listener on 127.0.0.1:LISTEN_PORT for the whole corpus run, recording what connects."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", LISTEN_PORT))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.received, self._stop = [], threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.received.append(conn.recv(200))
                except OSError:
                    self.received.append(b"(connected)")

    def close(self):
        self._stop.set()
        self.thread.join()
        self.sock.close()


def _machine_clean():
    """Left over from an earlier run: a forged /tmp/results.json, filler files."""
    if os.path.exists(FORGED):
        os.unlink(FORGED)
    for name in os.listdir("/tmp"):
        if name.startswith(FILLER):
            os.unlink(os.path.join("/tmp", name))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    for path in STOLEN:
        path.unlink(missing_ok=True)
    _machine_clean()
    listener = Listener()
    out = tmp_path_factory.mktemp("corpus") / "corpus.json"
    try:
        proc = run_grader("controls", "--corpus", "--json", out, timeout=900)
    finally:
        listener.close()
    assert out.exists(), f"the corpus did not run:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(out.read_text()), proc, listener


def test_every_attack_in_the_corpus_was_graded(graded):
    summary, _, _ = graded
    assert set(summary) == {p.stem for p in ADVERSARIAL.glob("*.py")}


@pytest.mark.parametrize("name", CORPUS)
def test_attack_gets_its_score(graded, name):
    summary, proc, _ = graded
    assert name in summary, proc.stdout
    assert summary[name]["problems"] == [], "\n".join(summary[name]["problems"])


def test_no_process_outlives_grading(graded):
    assert _processes_with("600.123") == []  # fork_background_process's sleep, in its own session
    assert _processes_with("600.321") == []  # fork_bomb's children


needs_a_box = pytest.mark.skipif(isolation.mode() != "bwrap",
                                 reason="workers get no bubblewrap box here: isolation is reduced (make doctor)")


@needs_a_box
def test_no_connection_reached_the_listener(graded):
    _, _, listener = graded
    assert listener.received == []


@needs_a_box
def test_nothing_was_written_outside_the_box(graded):
    assert not os.path.exists(FORGED)
    assert [n for n in os.listdir("/tmp") if n.startswith(FILLER)] == []


def test_a_forged_results_json_is_never_what_the_grader_reports(graded, tmp_path):
    """forged_results_json writes a perfect results.json beside itself, in its working folder and one above: all
    inside the worker's private copy. Its own folder stays clean, and the grader reports its true score."""
    folder = BUILD / "forged_results_json"  # the corpus run built it
    out = tmp_path / "results.json"
    proc = run_grader("grade", "--submission", folder, "--results", out, "--exercise", "scale_scores",
                      "--timeout", "10", "--pictures", "none")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(out.read_text())
    # its SCORES: nothing (inputs left unchanged earn no point with a wrong answer), not the forged full marks
    assert results["score"] == 0 and len(results["tests"]) > 1
    assert not (folder / "results.json").exists() and not (BUILD / "results.json").exists()
    assert not (ROOT / "results.json").exists() and not (ROOT / "exercises" / "results.json").exists()


@pytest.mark.skipif(not isolation.can_drop_privileges(),
                    reason="workers drop to another uid only when grading runs as root with a Python other users "
                           "can read; otherwise a kernel's host code can read what the grader's user can")
def test_kernel_host_code_could_not_copy_the_reference(graded):
    assert [p.name for p in STOLEN if p.exists()] == []


NOBODY = 65534


@needs_a_box
@pytest.mark.skipif(not isolation.is_root() or shutil.which("setpriv") is None,
                    reason="runs the grader as another, unprivileged user: needs root and setpriv")
def test_the_whole_corpus_as_an_unprivileged_user(graded):
    """A student's laptop: the grader runs as an ordinary user (nobody here), and bwrap builds each box in a user
    namespace of that user's own. The corpus's submissions (built by the run as root: nobody may not read
    solutions/) are graded one by one as `make grade` grades them, by the warm server (grader/warm) from the second
    on, and every attack gets its score again and reaches nothing."""
    home = Path(tempfile.mkdtemp(prefix="as-a-student-"))  # pytest's tmp_path is root's alone (0700 above it)
    try:
        for name in CORPUS:
            shutil.copytree(BUILD / name, home / "class" / name)
        (home / "results").mkdir()
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(home)], check=True)
        _machine_clean()
        listener = Listener()
        env = {k: v for k, v in os.environ.items() if k not in ("GRADER_WARM", "XDG_RUNTIME_DIR")}
        env.update(HOME=str(home), GRADER_CACHE_DIR=str(home / "cache"))
        as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                     str(ROOT / ".venv" / "bin" / "python"), "-m", "grader"]
        found, warm = {}, []
        try:
            for control in corpus_controls():
                out = home / "results" / f"{control.name}.json"
                timings = home / "results" / f"{control.name}.timings.json"
                done = subprocess.run([*as_nobody, "grade", "--warm", "--submission", str(home / "class" / control.name),
                                       "--suite", "public", "--timeout", f"{CORPUS_TIMEOUT:g}", "--pictures", "none",
                                       "--results", str(out), "--timings", str(timings)],
                                      cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
                assert out.exists(), done.stdout + done.stderr
                results = json.loads(out.read_text())
                assert results["extra_data"]["isolation"].startswith("full"), results["extra_data"]
                found[control.name] = verdict(control, results)
                warm.append(json.loads(timings.read_text())["warm"])
        finally:
            subprocess.run([*as_nobody, "warm-server", "--stop"], cwd=ROOT, env=env, capture_output=True)
            listener.close()
        assert sum(warm) >= len(warm) - 3, f"the warm server graded {sum(warm):g} of {len(warm)}"
        assert {name: problems for name, problems in found.items() if problems} == {}
        assert listener.received == [] and not os.path.exists(FORGED)
        assert [n for n in os.listdir("/tmp") if n.startswith(FILLER)] == []
        assert _processes_with("600.123") == [] and _processes_with("600.321") == []
    finally:
        shutil.rmtree(home, ignore_errors=True)
