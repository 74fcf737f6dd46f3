"""The adversarial corpus (solutions/adversarial/): submissions that attack the grader. Each must get exactly its
score with its message, no process of theirs may outlive grading, and nothing they tried to read or write outside
their folder may have happened.

Grading 14 hostile submissions, with the timeouts they trigger, takes minutes on 2 cores: more than `make test`
may take, so these run with `make test-corpus` (GRADER_CORPUS_TEST=1), which CI (.ci/run) runs after `make test`."""

import json
import os

import pytest

from grader.sandbox import isolation
from grader.dev.controls import ADVERSARIAL, BUILD, corpus_controls
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


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    for path in STOLEN:
        path.unlink(missing_ok=True)
    out = tmp_path_factory.mktemp("corpus") / "corpus.json"
    proc = run_grader("controls", "--corpus", "--json", out, timeout=900)
    assert out.exists(), f"the corpus did not run:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(out.read_text()), proc


def test_every_attack_in_the_corpus_was_graded(graded):
    summary, _ = graded
    assert set(summary) == {p.stem for p in ADVERSARIAL.glob("*.py")}


@pytest.mark.parametrize("name", CORPUS)
def test_attack_gets_its_score(graded, name):
    summary, proc = graded
    assert name in summary, proc.stdout
    assert summary[name]["problems"] == [], "\n".join(summary[name]["problems"])


def test_no_process_outlives_grading(graded):
    assert _processes_with("600.123") == []  # fork_background_process's sleep, in its own session


def test_a_forged_results_json_is_never_what_the_grader_reports(graded, tmp_path):
    """forged_results_json writes a perfect results.json beside itself, in its working folder and one above: all
    inside the worker's private copy. Its own folder stays clean, and the grader reports its true score."""
    folder = BUILD / "forged_results_json"  # the corpus run built it
    out = tmp_path / "results.json"
    proc = run_grader("grade", "--submission", folder, "--results", out, "--exercise", "scale_scores",
                      "--timeout", "10", "--pictures", "none")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(out.read_text())
    assert results["score"] == 1 and len(results["tests"]) > 1  # its SCORES: the inputs-unchanged test only
    assert not (folder / "results.json").exists() and not (BUILD / "results.json").exists()
    assert not (ROOT / "results.json").exists() and not (ROOT / "exercises" / "results.json").exists()


@pytest.mark.skipif(not isolation.can_drop_privileges(),
                    reason="workers drop to another uid only when grading runs as root with a Python other users "
                           "can read; otherwise a kernel's host code can read what the grader's user can")
def test_kernel_host_code_could_not_copy_the_reference(graded):
    assert [p.name for p in STOLEN if p.exists()] == []
