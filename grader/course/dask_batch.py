"""`python -m grader batch DIR --scheduler tcp://HOST:8786`: each student's grading as a task on a Dask cluster.

The instructor's machine reads each student's files and sends them to the cluster as bytes: a worker machine has
its own checkout of this repository and its own venv (docs/dask.md), not the instructor's disk. On the worker,
the task writes the files to a temporary folder and grades them exactly as a local batch does
(batch.grade_student: a `python -m grader grade` process, its workers in their boxes); it sends back the
student's results.json, scorecard.txt and pictures as bytes, and this side writes them to OUT/<student>/. Stamps,
progress and grades.csv are the local batch's (grader/course/jobs.py), so a rerun skips what is graded,
whichever way it was graded.

A worker that dies mid-task (killed, out of memory, its machine gone) loses nothing: the scheduler gives the task
to another worker, and the grading process the dead worker had started dies with it (PR_SET_PDEATHSIG) instead of
grading on unseen. A task that kills workers again and again is given up by the scheduler (its
distributed.scheduler.allowed-failures) and that student is reported as not graded.

Grades must not depend on which machine graded: before anything is sent, every worker's grader (the files that
decide a grade, jobs.GRADER_INPUTS) is compared with this checkout's and a worker whose checkout differs is named.
The hidden suite's seed travels with each task (GRADER_HIDDEN_SEED), so hidden inputs are the instructor's.
"""

import os
import socket
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.common.layout import ROOT
from grader.course import batch, jobs
from grader.suite import stagger as staggering

HIDDEN_SEED_FILE = "hidden_seed.txt"  # made on each machine: compared apart, sent with the tasks instead
WORKERS_TIMEOUT = 120  # seconds to wait for a first worker to join
MAX_WAITING = 512  # students submitted at once (a thread each waits on its task)


class ClusterProblem(Exception):
    """The cluster cannot grade this class (unreachable, no workers, a worker without the grader or with another
    version of it); str() says what to do."""


def checkout_digest():
    """The grader files of this checkout (jobs.GRADER_INPUTS), the hidden seed left out."""
    return jobs.tree_hash(*(ROOT / p for p in jobs.GRADER_INPUTS if (ROOT / p).exists()), skip=(HIDDEN_SEED_FILE,))


@dataclass
class Graded:
    """What a worker sends back for one student."""
    student: str
    ok: bool
    note: str
    files: dict = field(default_factory=dict)  # path relative to the student's result folder -> bytes
    folder: str = ""  # the worker's result folder, named in the scorecard
    worker: str = ""


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


def grade_on_worker(student, files, suite, timeout, digest, hidden_seed, require_isolation, jobs_by_host,
                    stagger=None):
    """The task, run on a worker: grade `files` ({name: bytes}) in a temporary folder as a local batch does."""
    host = socket.gethostname()
    if checkout_digest() != digest:
        return Graded(student, False, f"the checkout on worker {host} ({ROOT}) differs from the instructor's "
                      "grader: update it to the same commit and restart the worker", worker=host)
    env = {"GRADER_HIDDEN_SEED": str(hidden_seed)} if hidden_seed is not None else {}
    if require_isolation:
        env["GRADER_REQUIRE_ISOLATION"] = "1"
    try:
        from distributed import get_worker
        me = get_worker()
        at_once, where = jobs_by_host.get(me.address.rsplit(":", 1)[0], me.state.nthreads), me.address
    except (ImportError, ValueError):  # not on a Dask worker (called directly)
        at_once, where = 1, host
    with tempfile.TemporaryDirectory(prefix="dask-grade-") as tmp:
        folder = Path(tmp) / "submission" / student
        folder.mkdir(parents=True)
        for name, data in files.items():
            if name in batch.SUBMISSION_FILES:
                (folder / name).write_bytes(data)
        out = Path(tmp) / "graded" / student
        outcome = batch.grade_student(folder, out, suite, timeout, at_once, None, stagger, env=env,
                                      preexec_fn=_pdeathsig())
        produced = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    return Graded(student, outcome.ok, outcome.note, produced, str(out), where)


def _connect(address):
    try:
        from distributed import Client
    except ImportError:
        raise ClusterProblem("--scheduler needs dask.distributed: make venv installs it (requirements/course.txt)")
    try:
        client = Client(address)  # within dask's distributed.comm.timeouts.connect (30 s unless set)
    except (OSError, TimeoutError) as exc:
        raise ClusterProblem(f"cannot reach the Dask scheduler at {address}: {exc}")
    try:
        client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
    except TimeoutError:
        client.close()
        raise ClusterProblem(f"no Dask worker joined the scheduler at {address} within {WORKERS_TIMEOUT} s: start "
                             "them on the grading machines (make dask-worker SCHEDULER=...; docs/dask.md)")
    return client


def _check_workers(client, digest):
    """{host: graded at once} for the workers now connected; ClusterProblem if one cannot grade as this checkout."""
    try:  # a task of the grader's: the scheduler must load it too
        client.submit(checkout_digest, pure=False).result()
    except Exception as exc:
        raise ClusterProblem(f"the Dask cluster cannot run the grader's tasks ({type(exc).__name__}: "
                             f"{str(exc).split('. ')[0]}): start its scheduler and workers from checkouts of this "
                             "repository (make dask-scheduler; make dask-worker SCHEDULER=...; docs/dask.md)")
    try:
        digests = client.run(checkout_digest)
    except Exception as exc:  # the worker's own exception, raised here: most often no grader on its sys.path
        raise ClusterProblem(f"a Dask worker cannot run the grader ({type(exc).__name__}: {exc}): start each worker "
                             "from its checkout of this repository with make dask-worker SCHEDULER=... "
                             "(docs/dask.md)")
    stale = sorted(address for address, d in digests.items() if d != digest)
    if stale:
        raise ClusterProblem(f"the grader on Dask worker(s) {', '.join(stale)} differs from this checkout's: grades "
                             "would depend on the machine; update their checkouts to this commit and restart them")
    at_once = {}
    for address, info in client.scheduler_info(n_workers=-1)["workers"].items():
        host = address.rsplit(":", 1)[0]
        at_once[host] = at_once.get(host, 0) + info.get("nthreads", 1)
    return at_once


def _write(out, graded):
    """The worker's files for one student into out (its old results and pictures replaced)."""
    import shutil
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / "pictures", ignore_errors=True)
    (out / "results.json").unlink(missing_ok=True)
    for name, data in graded.files.items():
        path = out / name
        if path.resolve().is_relative_to(out.resolve()):
            path.parent.mkdir(parents=True, exist_ok=True)
            if name == "scorecard.txt":  # the worker's folder named in it: this side's instead
                data = data.replace(graded.folder.encode(), str(out).encode())
            path.write_bytes(data)


def grade_class(args, folder, out, students, stamps, grader):
    """Grade students (folders of `folder`) on the cluster at args.scheduler; the outcomes, in students' order."""
    from grader.judge import hidden_seed
    from grader.sandbox import isolation
    digest = checkout_digest()
    client = _connect(args.scheduler)
    try:
        at_once = _check_workers(client, digest)
        threads = sum(at_once.values())
        print(f"grading {len(students)} students in {folder} on the Dask cluster at {args.scheduler}: "
              f"{len(at_once)} machine(s), {threads} at a time ({args.suite} suites)")
        seed = hidden_seed.seed() if args.suite in ("hidden", "all") else None
        place_in_first_wave = staggering.first_wave(threads)

        def grade_one(student):
            files = {n: (folder / student / n).read_bytes() for n in batch.SUBMISSION_FILES
                     if (folder / student / n).is_file()}
            future = client.submit(grade_on_worker, student, files, args.suite, args.timeout, digest, seed,
                                   isolation.REQUIRED, at_once, staggering.as_option(place_in_first_wave()),
                                   key=f"grade-{student}-{os.urandom(4).hex()}", pure=False)
            try:
                graded = future.result()
            except Exception as exc:  # KilledWorker: the task took its workers down too often; or the worker's error
                return jobs.Outcome(student, False, note=f"Dask: {type(exc).__name__}: {exc}")
            _write(out / student, graded)
            return jobs.Outcome(student, graded.ok, note=f"{graded.note}, on {graded.worker}")

        return jobs.run_all(students, grade_one, jobs=min(MAX_WAITING, len(students)), stamps=stamps,
                                force=args.force, what="grading",
                                digest_of=lambda s: batch.submission_digest(folder / s) + grader)
    finally:
        client.close()
