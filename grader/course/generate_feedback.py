"""`nbgrader generate_feedback` for a whole class, split over the autograde's --jobs processes.

nbgrader makes one student's feedback after another in a single process, so a class's feedback was the one part
of `make autograde` that --jobs did not shorten. Here the autograded students are dealt round-robin into --jobs
groups and each group gets its own nbgrader process, which leaves out every other group's students
(CourseDirectory.student_id_exclude). Each student is in exactly one group, so no two processes write the same
feedback folder.

nbgrader also copies every file of the assignment beside the HTML (#917); autograde prunes them afterwards. The
grading/ folder (about 180 files a student) is not copied at all here: CourseDirectory.ignore is nbgrader's own
list plus that folder. The pruning stays, for whatever else a submission brings.
"""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader.course.release import run_nbgrader

# nbgrader's default CourseDirectory.ignore (tests/self/test_generate_feedback.py compares it with nbgrader's own)
NBGRADER_IGNORE = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback"]
FEEDBACK_IGNORE = NBGRADER_IGNORE + ["grading"]


def autograded_students(course, assignment):
    folder = Path(course) / "autograded"
    return sorted(p.parent.name for p in folder.glob(f"*/{assignment}")) if folder.is_dir() else []


def groups(students, at_once):
    """The students dealt round-robin into at most at_once groups, none empty. One group where an id holds a
    comma, which student_id_exclude (a comma-separated list) cannot name."""
    if any("," in s for s in students):
        return [list(students)] if students else []
    n = max(1, at_once)
    return [g for g in (students[k::n] for k in range(n)) if g]


def arguments(assignment, others):
    """nbgrader's arguments for the feedback of every autograded student but others."""
    exclude = [f"--CourseDirectory.student_id_exclude={','.join(others)}"] if others else []
    return ["generate_feedback", assignment, "--force", f"--CourseDirectory.ignore={FEEDBACK_IGNORE!r}", *exclude]


def generate(course, assignment, at_once):
    """Every autograded student's feedback, at_once nbgrader processes side by side. Returns the output of each
    process that failed (empty when all succeeded)."""
    students = autograded_students(course, assignment)
    dealt = groups(students, at_once) or [[]]  # nobody autograded: one run, which says so itself

    def run(group):
        return run_nbgrader(course, *arguments(assignment, [s for s in students if s not in group]), check=False)

    with ThreadPoolExecutor(len(dealt)) as pool:
        done = list(pool.map(run, dealt))
    return [proc.stdout + proc.stderr for proc in done if proc.returncode != 0]
