"""Grading a class on a Dask cluster: `python -m grader batch DIR --scheduler tcp://HOST:8786` and
`python -m grader autograde --scheduler tcp://HOST:8786`.

The instructor's machine reads what is to be graded and sends it to the cluster as bytes: a worker machine has its
own checkout of this repository and its own venv (docs/dask.md), not the instructor's disk. On the worker, a task
writes the files to a temporary folder and grades them as the local command does, with the same isolation (a
`python -m grader grade` process for batch, `python -m grader cell --plan` for autograde's test cells, their
workers in their boxes); it sends back what the grading wrote (results.json, the scorecard, pictures; the cells'
verdicts), and this side writes it where the local command would have. Stamps, progress and grades.csv stay the
local command's (grader/course/jobs.py), so a rerun skips what is graded, whichever way it was graded.

A worker that dies mid-task (killed, out of memory, its machine gone) loses nothing: the scheduler gives the task
to another worker, and the grading process the dead worker had started dies with it (PR_SET_PDEATHSIG) instead of
grading on unseen. A task that kills workers again and again is given up by the scheduler (its
distributed.scheduler.allowed-failures) and that student is reported as not graded.

Grades must not depend on which machine graded: before anything is sent, every worker's grader (the files that
decide a grade, jobs.GRADER_INPUTS) is compared with this checkout's, and a worker whose checkout differs is named.
The hidden suite's seed travels with each task (GRADER_HIDDEN_SEED), so hidden inputs are the instructor's.
"""

import json
import os
import shutil
from pathlib import Path

from grader.course import batch, jobs
from grader.course.dask_tasks import Graded, Settings, checkout_digest, grade_plan_on_worker, grade_student_on_worker
from grader.suite import stagger as staggering

WORKERS_TIMEOUT = 120  # seconds to wait for a first worker to join
MAX_WAITING = 512  # students submitted at once (a thread each waits on its task)


class ClusterProblem(Exception):
    """The cluster cannot grade this class (unreachable, no workers, a worker without the grader or with another
    version of it); str() says what to do."""


class Cluster:
    """The connection to a Dask cluster whose workers were checked to grade as this checkout does.

        with Cluster(address, hidden=True) as cluster: cluster.threads, cluster.grade_student(...), ..."""

    def __init__(self, address, hidden):
        from grader.judge import hidden_seed
        from grader.sandbox import isolation
        self.address = address
        self.client = _connect(address)
        try:
            digest = checkout_digest()
            at_once = _check_workers(self.client, digest)
        except ClusterProblem:
            self.client.close()
            raise
        self.machines, self.threads = len(at_once), sum(at_once.values())
        self.settings = Settings(digest, hidden_seed.seed() if hidden else None, isolation.policy.current().value, at_once)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.client.close()

    def _run(self, task, name, *args):
        """task(*args, settings) on a worker; a Graded (one that failed when the cluster gave up on the task)."""
        future = self.client.submit(task, *args, self.settings, key=f"grade-{name}-{os.urandom(4).hex()}",
                                    pure=False)
        try:
            return future.result()
        except Exception as exc:  # KilledWorker: the task took its workers down too often; or the worker's error
            return Graded(False, f"Dask: {type(exc).__name__}: {exc}")

    def grade_student(self, folder, out, suite, timeout, stagger=None):
        """batch's grade_student, on the cluster: out/ gets what it would have got; the Outcome."""
        files = {n: (folder / n).read_bytes() for n in batch.SUBMISSION_FILES if (folder / n).is_file()}
        graded = self._run(grade_student_on_worker, folder.name, folder.name, files, suite, timeout, stagger)
        _write(out, graded)  # nothing sent back: the old results go, as a failed local grading's do
        return jobs.Outcome(folder.name, graded.ok, note=", on ".join(filter(None, (graded.note, graded.worker))))

    def grade_plan(self, verdicts, entries, timeout, name="plan"):
        """pregrade's run of `python -m grader cell --plan`, on the cluster: the verdicts land in `verdicts` as
        they would have; True when they did."""
        verdicts = Path(verdicts)
        files = {str(p.relative_to(verdicts)): p.read_bytes() for e in entries
                 for p in sorted(Path(e["submission"]).rglob("*")) if p.is_file()}
        plan = [dict(e, submission=str(Path(e["submission"]).relative_to(verdicts)),
                     out=str(Path(e["out"]).relative_to(verdicts))) for e in entries]
        graded = self._run(grade_plan_on_worker, name, files, plan, timeout)
        if not graded.ok:
            return False
        for rel, data in graded.files.items():
            path = verdicts / rel
            if path.resolve().is_relative_to(verdicts.resolve()):
                path.parent.mkdir(parents=True, exist_ok=True)
                if path.suffix == ".json":  # a verdict names its picture in the worker's folder: this side's instead
                    found = json.loads(data)
                    picture = found.get("verdict", {}).get("picture")
                    if picture:
                        found["verdict"]["picture"] = str(verdicts / Path(picture).relative_to(graded.folder))
                    data = json.dumps(found).encode() + b"\n"
                path.write_bytes(data)
        return True


def connect(address, hidden):
    """A Cluster for address, or None when address is None (grading stays local)."""
    return Cluster(address, hidden) if address else None


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
    """batch --scheduler: grade students (folders of `folder`) on the cluster; the outcomes, in students' order."""
    with Cluster(args.scheduler, hidden=args.suite in ("hidden", "all")) as cluster:
        print(f"grading {len(students)} students in {folder} on the Dask cluster at {args.scheduler}: "
              f"{cluster.machines} machine(s), {cluster.threads} at a time ({args.suite} suites)")
        place_in_first_wave = staggering.first_wave(cluster.threads)

        def grade_one(student):
            return cluster.grade_student(folder / student, out / student, args.suite, args.timeout,
                                         staggering.as_option(place_in_first_wave()))

        return jobs.run_all(students, grade_one, jobs=min(MAX_WAITING, len(students)), stamps=stamps,
                            force=args.force, what="grading",
                            digest_of=lambda s: batch.submission_digest(folder / s) + grader)
