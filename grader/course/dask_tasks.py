"""The tasks a Dask worker runs for grader/course/dask_cluster.py, and what they send back.

Each task writes the files it was sent to a temporary folder and grades them as the local command does, with the
same isolation: batch's grade_student (a `python -m grader grade` process), or autograde's `python -m grader cell
--plan`. Before grading, it compares this checkout's grader with the instructor's (a worker on another commit
would grade by other rules). The grading process gets PR_SET_PDEATHSIG, so it dies with a killed worker.
"""

import json
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.common import environment
from grader.common.layout import ROOT
from grader.course import batch, jobs
from grader.sandbox import isolation

HIDDEN_SEED_FILE = "hidden_seed.txt"  # made on each machine: compared apart, sent with the tasks instead


def checkout_digest():
    """The grader files of this checkout (jobs.GRADER_INPUTS), the hidden seed left out."""
    return jobs.tree_hash(*(ROOT / p for p in jobs.GRADER_INPUTS if (ROOT / p).exists()), skip=(HIDDEN_SEED_FILE,))


@dataclass
class Graded:
    """What a worker sends back: whether it graded, a note, the files it wrote (path relative to its folder ->
    bytes), its folder (named in those files) and the worker."""
    ok: bool
    note: str
    files: dict = field(default_factory=dict)
    folder: str = ""
    worker: str = ""


@dataclass(frozen=True)
class Settings:
    """What every task of one class carries besides its files."""
    digest: str  # the instructor's checkout_digest()
    hidden_seed: int  # the instructor's hidden seed (None when no hidden test is graded)
    isolation_policy: str  # grader/sandbox/isolation.py Policy's value: what a grading does without a box
    at_once: dict  # {host: gradings at once on it}


def _pdeathsig():
    """A preexec_fn that has the kernel kill the child when the worker thread waiting on it dies (Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes
    import signal
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork: the child only calls it
    PR_SET_PDEATHSIG = 1

    def die_with_parent():
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    return die_with_parent


def _here(settings):
    """(gradings at once on this machine, this worker's name, the grading's extra environment), or a Graded that
    refuses when this checkout's grader is not the instructor's."""
    host = socket.gethostname()
    if checkout_digest() != settings.digest:
        return Graded(False, f"the checkout on worker {host} ({ROOT}) differs from the instructor's grader: update "
                      "it to the same commit and restart the worker", worker=host)
    env = {"GRADER_HIDDEN_SEED": str(settings.hidden_seed)} if settings.hidden_seed is not None else {}
    env[isolation.POLICY_VAR] = settings.isolation_policy
    try:
        from distributed import get_worker
        me = get_worker()
        return settings.at_once.get(me.address.rsplit(":", 1)[0], me.state.nthreads), me.address, env
    except (ImportError, ValueError):  # not on a Dask worker (called directly)
        return 1, host, env


def _written(folder, skip=()):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(Path(folder).rglob("*"))
            if p.is_file() and str(p.relative_to(folder)) not in skip}


def grade_student_on_worker(student, files, suite, timeout, stagger, settings):
    """batch's task: grade `files` ({name: bytes}) in a temporary folder as a local batch does."""
    here = _here(settings)
    if isinstance(here, Graded):
        return here
    at_once, where, env = here
    with tempfile.TemporaryDirectory(prefix="dask-grade-") as tmp:
        folder = Path(tmp) / "submission" / student
        folder.mkdir(parents=True)
        for name, data in files.items():
            if name in batch.SUBMISSION_FILES:
                (folder / name).write_bytes(data)
        out = Path(tmp) / "graded" / student
        outcome = batch.grade_student(folder, out, suite, timeout, at_once, None, stagger, env=env,
                                      preexec_fn=_pdeathsig())
        return Graded(outcome.ok, outcome.note, _written(out), str(out), where)


def grade_plan_on_worker(files, plan, timeout, settings):
    """autograde's task: the test cells' answers (`files`, paths relative to the verdicts folder) graded by one
    `python -m grader cell --plan` (plan: pregrade's entries, paths relative too), as pregrade does locally."""
    here = _here(settings)
    if isinstance(here, Graded):
        return here
    at_once, where, env = here
    with tempfile.TemporaryDirectory(prefix="dask-grade-") as tmp:
        for name, data in files.items():
            path = Path(tmp, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        entries = [dict(e, submission=str(Path(tmp, e["submission"])), out=str(Path(tmp, e["out"]))) for e in plan]
        plan_file = Path(tmp) / "plan.json"
        plan_file.write_text(json.dumps(entries, indent=1))
        try:
            proc = subprocess.run([sys.executable, "-m", "grader", "cell", "--plan", str(plan_file)], cwd=ROOT,
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout,
                                  env=dict(environment.thread_env(at_once), **env), preexec_fn=_pdeathsig())
        except subprocess.TimeoutExpired:
            return Graded(False, f"ran past {timeout:g} s", worker=where)
        if proc.returncode != 0:
            return Graded(False, f"grader exit code {proc.returncode}: {proc.stderr[-2000:]}", worker=where)
        return Graded(True, "", _written(tmp, skip=set(files) | {"plan.json"}), tmp, where)
