"""Grading a class in parallel: a pool of subprocesses, a progress display, and stamps that make reruns resume.

Shared by `python -m grader batch` and `python -m grader autograde`. Each student is one subprocess, so one
student's crash, hang or memory blow-up costs that student only; threads here only wait on them.

A stamp records a hash of what was graded (the student's files and the grader's own files); a rerun skips a
student whose stamp matches, so an interrupted batch resumes where it stopped and a changed submission, test
or reference is regraded.
"""

import hashlib
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from grader.report.progress import ProgressShown
from grader.common.layout import ROOT


# what decides a grade besides the submission: the suites, the grader, the references, the CPU runtime
GRADER_INPUTS = ["grader", "tests/public", "tests/hidden", "solutions/attention.py", "solutions/microgpt_cuda.cu",
                 "csrc/cuda_cpu", "conftest.py"]


def tree_hash(*paths, skip=()):
    """sha256 over the files under paths (names and contents, sorted); bytecode and skipped names left out."""
    h = hashlib.sha256()
    for top in paths:
        top = Path(top)
        files = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for path in files:
            if "__pycache__" in path.parts or path.suffix == ".pyc" or path.name in skip:
                continue
            h.update(str(path.relative_to(top.parent)).encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def grader_hash():
    return tree_hash(*(ROOT / p for p in GRADER_INPUTS if (ROOT / p).exists()))


class Stamps:
    """One small file per student: the hash graded last time."""

    def __init__(self, folder):
        self.folder = Path(folder)

    def fresh(self, student, digest):
        path = self.folder / student
        return path.is_file() and path.read_text().strip() == digest

    def record(self, student, digest):
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / student).write_text(digest + "\n")

    def forget(self, student):
        (self.folder / student).unlink(missing_ok=True)


@dataclass
class Outcome:
    student: str
    ok: bool
    seconds: float = 0.0
    skipped: bool = False
    note: str = ""


def _outcome_line(done, total, outcome):
    if outcome.skipped:
        state = "unchanged, skipped"
    else:
        state = f"{'done' if outcome.ok else 'FAILED'} in {outcome.seconds:.1f} s"
    return f"[{done}/{total}] {outcome.student}: {state}" + (f" ({outcome.note})" if outcome.note else "")


def run_all(students, grade_one, *, jobs, stamps, digest_of, force=False, what="grading", console=None):
    """Grade each student with grade_one(student) -> Outcome, jobs at a time, skipping fresh stamps.
    Returns the outcomes in the order given."""
    outcomes = {}
    todo = []
    for student in students:
        digest = digest_of(student)
        if not force and stamps.fresh(student, digest):
            outcomes[student] = Outcome(student, True, skipped=True)
        else:
            todo.append((student, digest))
    done = 0

    def shown(outcome):
        nonlocal done
        done += 1
        progress.advance(done, len(students), outcome.student, line=_outcome_line(done, len(students), outcome))

    with ProgressShown(console, what, total=len(students)) as progress:
        for student in students:
            if student in outcomes:
                shown(outcomes[student])

        def one(student, digest):
            stamps.forget(student)  # a crash mid-way must not leave an old stamp that looks fresh
            start = time.perf_counter()
            outcome = grade_one(student)
            outcome.seconds = time.perf_counter() - start
            if outcome.ok:
                stamps.record(student, digest)
            return outcome

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = [pool.submit(one, s, d) for s, d in todo]
            for future in as_completed(futures):
                outcome = future.result()
                outcomes[outcome.student] = outcome
                shown(outcome)
    return [outcomes[s] for s in students]
