"""Writing results.json in Gradescope's autograder schema (score, tests[] with name, score, max_score,
status, output, visibility, tags, extra_data). Public tests are `visible`; hidden ones `after_published`; each
test's extra_data names the kind of its failure (`not_implemented`, `wrong_values`, `timed_out`, ...) or null, the
known mistakes recognised (`mistakes`: ids) and, for the kernel's ANDREA-120M run, `kernel_seconds`."""

import json
from pathlib import Path

from grader.common import i18n
from grader.common.i18n import N_, _
from grader.report.scorecard import exercise_totals

VISIBILITY = {"public": "visible", "hidden": "after_published"}
# Where the instructor allowed reduced isolation (--allow-reduced-isolation) and a grading got it, student code may
# have read the reference or the hidden suite and put it into a message: every test is then hidden from students
# (the instructor still sees it), and the summary says why
WITHHELD = N_("Graded with reduced isolation, as your instructor allowed: your score counts, and the tests' messages "
               "are shown to your instructor only.")
REFUSED = N_("Your submission was not graded: this grading machine cannot keep student code apart from the grader "
              "({why}). Nothing of yours is lost; please tell your instructor.")


def to_gradescope(run, *, execution_time):
    tests = []
    for r in run.results:
        tests.append({
            "name": f"{r.exercise}: {r.name.split('::', 1)[-1]}",
            "score": r.score,
            "max_score": r.points,
            "status": "passed" if r.passed else "failed",
            "output": "\n\n".join([r.message] * bool(r.message) + r.notes),
            "visibility": "hidden" if run.withhold_output else VISIBILITY[r.suite],
            "tags": [r.exercise],
            # why it failed, as a kind (grader/common/failures.py), for tools that act on it without parsing text
            # and the known mistakes recognised (ids, grader/judge/hints.py MISTAKES and the kernel's diagnostics,
            # grader/sandbox/replies.py), with any figures measured (the kernel's time): the class report counts them
            "extra_data": {"failure": r.failure.name.lower() if r.failure is not None else None,
                           "mistakes": list(r.mistakes), **r.data},
        })
    totals = exercise_totals(run.results)
    summary = "; ".join(f"{ex} {e:g}/{p:g}" for ex, (e, p, _results) in totals.items())
    if run.isolation and not run.isolation.startswith("full"):
        summary += "\n" + _("isolation: {how}").format(how=run.isolation)
    if run.withhold_output:  # the grader's problems may quote what student code printed
        summary += "\n" + _(WITHHELD)
    elif run.problems:
        summary += "\n" + _("grader problems:") + "\n" + "\n".join(run.problems)
    return {
        "score": sum(r.score for r in run.results),
        "execution_time": round(execution_time, 2),
        "output": summary,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        # how the student's code was kept apart (grader/sandbox/isolation.py): "full: ...", or "reduced: <why>"
        "extra_data": {"isolation": run.isolation, "language": i18n.chosen(), **({"problems": run.problems} if run.withhold_output else {})},
    }


def refused(why):
    """results.json of a grading refused before any student code ran (no box, and the policy requires one)."""
    return {"score": 0, "execution_time": 0.0, "output": _(REFUSED).format(why=why), "visibility": "visible",
            "stdout_visibility": "hidden", "tests": [], "extra_data": {"isolation": "refused: " + why}}


def write_refused(path, why):
    Path(path).write_text(json.dumps(refused(why), indent=2) + "\n")


def write(path, run, *, execution_time):
    with open(path, "w") as f:
        json.dump(to_gradescope(run, execution_time=execution_time), f, indent=2)
        f.write("\n")
