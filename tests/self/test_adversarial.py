"""The adversarial corpus (solutions/adversarial/): submissions that attack the grader. Each must get exactly its
score with its message, no process of theirs may outlive grading, and nothing they tried to read or write outside
their folder may have happened.

Grading 14 hostile submissions, with the timeouts they trigger, takes minutes on 2 cores: more than `make test`
may take, so these run with `make test-corpus` (GRADER_CORPUS_TEST=1), which CI (.ci/run) runs after `make test`."""

import json
import os

import pytest

from grader.sandbox import isolation
from grader.dev.controls import corpus_controls
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


def test_corpus_covers_the_attacks():
    assert len(CORPUS) >= 12


@pytest.mark.parametrize("name", CORPUS)
def test_attack_gets_its_score(graded, name):
    summary, proc = graded
    assert name in summary, proc.stdout
    assert summary[name]["problems"] == [], "\n".join(summary[name]["problems"])


def test_no_process_outlives_grading(graded):
    assert _processes_with("600.123") == []  # fork_background_process's sleep, in its own session


def test_nothing_was_written_into_the_repository(graded):
    assert not (ROOT / "results.json").exists()
    assert not (ROOT / "exercises" / "results.json").exists()


@pytest.mark.skipif(not isolation.can_drop_privileges(),
                    reason="workers drop to another uid only when grading runs as root with a Python other users "
                           "can read; otherwise a kernel's host code can read what the grader's user can")
def test_kernel_host_code_could_not_copy_the_reference(graded):
    assert [p.name for p in STOLEN if p.exists()] == []
