"""The Gradescope image end to end, inside the memory it states: setup.sh's `prebuild` from a cold cache, then the
grading of the reference and of a wrong upload, each in a fresh container made from that image. A minute or more on
2 cores (every expected answer computed anew), so it runs with `make test-deploy` (GRADER_DEPLOY_TEST=1), which CI
runs; `make test` keeps the autograder's other tests (test_batch.py)."""

import os
import shutil
import subprocess
import sys

import pytest

from grader.dev import footprint
from helpers import ROOT, grade_upload, gradescope_image

pytestmark = pytest.mark.skipif(not os.environ.get("GRADER_DEPLOY_TEST"),
                                reason="the deployments end to end: make test-deploy (GRADER_DEPLOY_TEST=1)")


def _as_setup_leaves_it(source, preexec_fn=None):
    """What setup.sh's `grader prebuild` leaves in the image, under the zip's own cache: the CPU runtime's objects,
    copied from this checkout's (compiling them again takes ~20 s: their folder is named by their sources, flags
    and compiler, not by where it is, so the grader in the zip finds them as if it had built them); then the zip's
    own `prebuild` run for real, in preexec_fn's cgroup, computing every expected answer from a cold cache.
    Returns {file: mtime} of both, to show that grading used them as they were."""
    from grader.cuda import build
    built = build.runtime_objects()[0].parent
    copy = shutil.copytree(built, source / "build" / "kernels" / built.name)
    proc = subprocess.run([sys.executable, "-m", "grader", "prebuild"], cwd=source, capture_output=True, text=True,
                          timeout=900, preexec_fn=preexec_fn, env=dict(os.environ, GRADER_HEAP="lean"))  # setup.sh's
    assert proc.returncode == 0 and "every expected answer of both suites" in proc.stdout, proc.stdout + proc.stderr
    answers = [p for p in (source / "build" / "expected").rglob("*") if p.is_file() and p.suffix != ".lock"]
    assert len(answers) > 100, answers  # both suites' answers and bounds, the seeded inputs
    return {p: p.stat().st_mtime_ns for p in (*copy.glob("*.o"), *answers)}


@pytest.mark.skipif(not footprint.MemoryLimit.available(), reason="needs a writable memory cgroup (root on Linux)")
def test_gradescope_grades_the_reference_in_full_within_the_stated_memory(open_tmp):
    """The memory docs/instructors.md tells instructors to choose, enforced by the kernel as Gradescope's container
    would, on setup.sh's `prebuild` (every expected answer of both suites, computed from a cold cache) and then on
    the grading of the reference (both suites and the build of its kernel): every point, nothing killed, and the
    grading computes no answer of its own (it finds each one where prebuild left it). Then a wrong submission, in
    a fresh container too: a weighted sum and a kernel whose known mistakes the hints name (their answers made by
    prebuild as well: grader/judge/mistaken_answers.py), graded as those controls are, computing nothing either."""
    from grader.dev import controls, verdict
    upload = {name: (ROOT / "solutions" / name).read_text() for name in ("attention.py", "microgpt_cuda.cu")}
    known = {c.name: c for c in controls.all_controls()}
    wrong_sum, wrong_kernel = known["weighted_sum_transposed"], known["kernel_no_scale"]
    wrong_upload = {"attention.py": controls.files(wrong_sum)["attention.py"],
                    "microgpt_cuda.cu": controls.files(wrong_kernel)["microgpt_cuda.cu"]}
    root = gradescope_image(open_tmp)
    with footprint.MemoryLimit(footprint.TARGET_MEMORY) as limit:
        prebuilt = _as_setup_leaves_it(root / "source", preexec_fn=limit.enter_child)
        results = grade_upload(root, upload, preexec_fn=limit.enter_child)
        wrong = grade_upload(root, wrong_upload, preexec_fn=limit.enter_child)
        killed, peak = limit.out_of_memory_kills(), limit.peak()
    assert killed == 0, f"the out-of-memory killer ran {killed} time(s) under {footprint.TARGET_MEMORY / 1e9} GB"
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 0, results.get("output")
    assert results["extra_data"]["isolation"].startswith("full")
    assert peak <= footprint.TARGET_MEMORY
    assert prebuilt and all(p.stat().st_mtime_ns == t for p, t in prebuilt.items())  # used as setup.sh left them
    computed = [p for p in (root / "source" / "build" / "expected").rglob("*")
                if p.is_file() and p.suffix != ".lock" and p not in prebuilt]
    assert computed == [], computed  # neither grading computed anything that setup.sh had not
    totals = verdict.per_exercise(wrong)  # the two controls' points, full marks elsewhere
    declared = {ex: wrong_sum.scores.get(ex, wrong_kernel.scores.get(ex, possible))
                for ex, (_, possible) in totals.items()}
    assert {ex: earned for ex, (earned, _) in totals.items()} == declared, (totals, declared)
    messages = "\n".join(t["output"] for t in wrong["tests"])
    mistakes = {m for t in wrong["tests"] for m in (t.get("extra_data") or {}).get("mistakes") or ()}
    assert wrong_sum.hint in messages and wrong_kernel.hint in messages
    assert {wrong_sum.mistake, wrong_kernel.mistake} <= mistakes, mistakes
