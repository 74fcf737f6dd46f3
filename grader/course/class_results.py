"""A graded class as data: every submission's results.json (batch, autograde and Gradescope exports all write one),
its scores per exercise, the known mistakes and kernel diagnostics it carries, its kernel time, and the files a
student reads (scorecard, feedback, pictures). The class report (grader/course/class_report.py) draws from it.

Mistakes are read from each test's extra_data (`mistakes`: ids named by grader/judge/hints.py and the CPU runtime's
diagnostics, grader/sandbox/replies.py; `failure`: the failure's kind), never parsed out of the messages.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from grader.common.i18n import N_, _
from grader.common.layout import EXERCISES, KERNEL_EXERCISE
from grader.judge.hints import MISTAKES
from grader.sandbox.replies import KERNEL_DIAGNOSTIC_NAMES

# failure kinds that are a kernel diagnostic of their own (grader/common/failures.py Kind, lower case)
KERNEL_FAILURES = {"timed_out": N_("timeout (a kernel that never ends)"), "build_failed": N_("does not compile"),
                   "crashed": N_("crashed")}
NOT_BUILT = {"build_failed", "missing", "not_gradable", "not_implemented"}  # the kernel never ran
NAMES = {**MISTAKES, **KERNEL_DIAGNOSTIC_NAMES}


def name_of(mistake):
    """What the report calls a mistake id or a kernel failure, in the report's language."""
    return _(KERNEL_FAILURES.get(mistake) or NAMES.get(mistake, mistake))


class NotResults(Exception):
    """A file or folder that holds no readable results: str() says which and why."""


@dataclass
class Submission:
    student: str
    folder: Path  # the folder of its results.json
    results: dict
    feedback: list = field(default_factory=list)  # files the student reads: scorecard, feedback HTML, pictures

    @property
    def tests(self):
        return self.results.get("tests", [])

    def exercise(self, test):
        tags = test.get("tags") or [""]
        return tags[0]

    def scores(self):
        """{exercise: (earned, possible)} in lesson order (exercises this submission's tests name)."""
        totals = {}
        for t in self.tests:
            earned, possible = totals.get(self.exercise(t), (0.0, 0.0))
            totals[self.exercise(t)] = (earned + float(t.get("score", 0)), possible + float(t.get("max_score", 0)))
        return {ex: totals[ex] for ex in [*EXERCISES, *sorted(set(totals) - set(EXERCISES))] if ex in totals}

    @property
    def total(self):
        return float(self.results.get("score", sum(e for e, _possible in self.scores().values())))

    @property
    def max_score(self):
        return sum(p for _earned, p in self.scores().values())

    def mistakes(self):
        """{mistake id: exercise} of every known mistake its failed tests carry, the kernel's failure kinds too."""
        found = {}
        for t in self.tests:
            extra = t.get("extra_data") or {}
            for m in extra.get("mistakes") or ():
                found.setdefault(m, self.exercise(t))
            # a crash that the runtime named (out-of-bounds, say) counts as that, not as a crash as well
            if (self.exercise(t) == KERNEL_EXERCISE and extra.get("failure") in KERNEL_FAILURES
                    and not extra.get("mistakes")):
                found.setdefault(extra["failure"], KERNEL_EXERCISE)
        return found

    def kernel_built(self):
        """True when the kernel compiled and ran (some kernel test failed for another reason or passed), None
        when no kernel test was graded."""
        kernel = [t for t in self.tests if self.exercise(t) == KERNEL_EXERCISE]
        if not kernel:
            return None
        return any((t.get("extra_data") or {}).get("failure") not in NOT_BUILT for t in kernel)

    def kernel_seconds(self):
        """The kernel's timing at the ANDREA-120M shape ({shape, seconds, reference_seconds, device}) or None."""
        for t in self.tests:
            timing = (t.get("extra_data") or {}).get("kernel_seconds")
            if isinstance(timing, dict) and isinstance(timing.get("seconds"), (int, float)):
                return timing
        return None

    def picture(self, exercise):
        """This submission's picture of exercise (pictures/<exercise>.png next to its results), or None."""
        for path in self.feedback:
            if path.suffix == ".png" and path.stem == exercise:
                return path
        return None


def _student_name(results_file):
    folder = results_file.parent
    # a Gradescope-style layout keeps results.json in results/: the student is the folder above
    return folder.parent.name if folder.name == "results" else folder.name


def _feedback_files(folder, extra_folders=()):
    files = [folder / "scorecard.txt"] if (folder / "scorecard.txt").is_file() else []
    for top in (folder, *extra_folders):
        files += sorted(p for p in Path(top).rglob("*.html") if p.is_file())
    if (folder / "pictures").is_dir():
        files += sorted((folder / "pictures").glob("*.png"))
    return files


def load(paths, feedback_root=None):
    """The submissions under paths (results.json files, or folders searched for them), sorted by student.
    feedback_root: an nbgrader course's feedback/ folder, whose <student>/ HTML is linked too."""
    found = []
    for path in map(Path, paths):
        if path.is_file():
            files = [path]
        elif path.is_dir():
            files = sorted(path.rglob("results.json"))
        else:
            raise NotResults(f"{path} does not exist")
        if not files:
            raise NotResults(f"no results.json under {path}: grade the class first "
                             "(python -m grader batch DIR, or make autograde)")
        found += files
    submissions = {}
    for file in found:
        try:
            results = json.loads(file.read_text())
        except (OSError, ValueError) as exc:
            raise NotResults(f"{file} is not a readable results.json: {exc}") from None
        if not isinstance(results, dict) or not isinstance(results.get("tests"), list):
            raise NotResults(f"{file} has no tests[]: it is not a Gradescope-format results.json")
        student = _student_name(file)
        extra = [Path(feedback_root) / student] if feedback_root and (Path(feedback_root) / student).is_dir() else []
        if student in submissions:
            raise NotResults(f"two results.json for student {student!r}: {submissions[student].folder} and "
                             f"{file.parent}; give one folder per class")
        submissions[student] = Submission(student, file.parent, results, _feedback_files(file.parent, extra))
    return [submissions[s] for s in sorted(submissions)]


def pass_rates(submissions):
    """{exercise: [(test name, passed, graded)]}: how many submissions passed each test, in the suite's order."""
    rates = {}
    for sub in submissions:
        for t in sub.tests:
            row = rates.setdefault(sub.exercise(t), {}).setdefault(t.get("name", "?"), [0, 0])
            row[0] += t.get("status") == "passed"
            row[1] += 1
    return {ex: [(name, p, n) for name, (p, n) in tests.items()] for ex, tests in rates.items()}


def mistake_counts(submissions):
    """[(mistake id, exercise, [students])], most common first."""
    who = {}
    for sub in submissions:
        for mistake, exercise in sub.mistakes().items():
            who.setdefault((mistake, exercise), []).append(sub.student)
    return sorted(((m, ex, students) for (m, ex), students in who.items()), key=lambda x: (-len(x[2]), x[0]))
