"""The class report without a browser (make test): two students really graded on one exercise (the reference and
the leaking mask), the report built from their results.json, what it counts read back from the HTML; what a bad
input says; and the controls' MISTAKE check failing on results that do not carry the mistake.
(tests/self/test_browser_report.py opens a whole class's report in chromium: make test-browser.)"""

import html
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from grader.dev.controls import WRONG, Control, build, verdict
from grader.course import class_results
from helpers import ROOT, run_grader


@pytest.fixture(scope="module")
def graded():
    top = Path(tempfile.mkdtemp(prefix="class-report-"))
    os.chmod(top, 0o755)  # workers run as other uids when grading as root: they must reach the submissions
    students = {"reference": ROOT / "solutions", "leaky": build(Control.load(WRONG / "mask_leaks_future.py"))}
    for name, folder in students.items():
        submission = top / "submissions" / name
        submission.mkdir(parents=True)
        shutil.copy2(folder / "attention.py", submission)
        out = top / "class" / name
        out.mkdir(parents=True)
        proc = run_grader("grade", "--submission", submission, "--exercise", "apply_causal_mask",
                          "--results", out / "results.json", "--report-dir", out / "pictures")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        (out / "scorecard.txt").write_text(proc.stdout)
    yield top
    shutil.rmtree(top, ignore_errors=True)


def test_results_carry_the_mistake_as_data(graded):
    leaky = json.loads((graded / "class" / "leaky" / "results.json").read_text())
    carried = [t["extra_data"]["mistakes"] for t in leaky["tests"] if t["status"] == "failed"]
    assert carried and all(m == ["mask_leaks_future"] for m in carried), carried
    reference = json.loads((graded / "class" / "reference" / "results.json").read_text())
    assert all(t["extra_data"]["mistakes"] == [] for t in reference["tests"])


def test_the_report_counts_the_mistake_and_links_the_feedback(graded):
    out = graded / "report.html"
    proc = run_grader("report", graded / "class", "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = out.read_text()
    row = re.search(r"<tr><td>the mask leaks the future \(j &gt; i not masked\)</td><td>apply_causal_mask</td>"
                    r"<td class='num'>(\d+)</td><td>(.*?)</td>", page)
    assert row and row.group(1) == "1" and ">leaky<" in row.group(2) and "reference" not in row.group(2), row
    assert "data:image/png;base64," in page and "<script src" not in page and "<link" not in page
    assert "http://" not in page and "https://" not in page  # nothing fetched: it opens offline
    links = [html.unescape(h) for h in re.findall(r'href="([^"#][^"]*)"', page)]
    assert any(h.endswith("scorecard.txt") for h in links) and any(h.endswith("apply_causal_mask.png") for h in links)
    assert all((out.parent / h).is_file() for h in links), links
    assert "No kernel timings" in page  # one exercise graded: no kernel test ran


def test_bad_inputs_say_what_is_wrong(graded, tmp_path):
    proc = run_grader("report", tmp_path / "nowhere", "--out", tmp_path / "r.html")
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    (tmp_path / "empty").mkdir()
    proc = run_grader("report", tmp_path / "empty", "--out", tmp_path / "r.html")
    assert proc.returncode == 2 and "no results.json" in proc.stderr and "grader batch" in proc.stderr
    (tmp_path / "bad" / "someone").mkdir(parents=True)
    (tmp_path / "bad" / "someone" / "results.json").write_text('{"score": 3}')
    proc = run_grader("report", tmp_path / "bad", "--out", tmp_path / "r.html")
    assert proc.returncode == 2 and "no tests[]" in proc.stderr
    proc = run_grader("report", "--out", tmp_path / "r.html")
    assert proc.returncode == 2 and "--course" in proc.stderr
    proc = run_grader("report", "--course", tmp_path / "empty", "--out", tmp_path / "r.html")
    assert proc.returncode == 2 and "run make autograde first" in proc.stderr


def test_a_control_whose_mistake_is_not_carried_is_reported(graded):
    """The controls' MISTAKE check can fail: results without the id are a problem, with it none."""
    control = Control.load(WRONG / "mask_leaks_future.py")
    leaky = json.loads((graded / "class" / "leaky" / "results.json").read_text())
    assert not [p for p in verdict(control, leaky) if "mistake" in p]
    for t in leaky["tests"]:
        t["extra_data"]["mistakes"] = []
    assert [p for p in verdict(control, leaky) if "does not name the mistake 'mask_leaks_future'" in p]


def test_kernel_failures_count_as_diagnostics():
    """A kernel that timed out or did not compile counts as that diagnostic; a kernel never built is not 'compiled'."""
    def sub(failure):
        test = {"name": "cuda_kernel: t", "score": 0, "max_score": 1, "status": "failed", "tags": ["cuda_kernel"],
                "extra_data": {"failure": failure, "mistakes": []}}
        return class_results.Submission(failure, Path("."), {"score": 0, "tests": [test]})
    assert sub("timed_out").mistakes() == {"timed_out": "cuda_kernel"} and sub("timed_out").kernel_built()
    assert sub("build_failed").mistakes() == {"build_failed": "cuda_kernel"}
    assert sub("build_failed").kernel_built() is False and sub("not_implemented").kernel_built() is False


def test_late_comes_from_nbgrader_s_gradebook(graded, tmp_path, monkeypatch):
    """autograde's mark_late reads each submission's lateness from a real nbgrader gradebook into results.json,
    and the report's late column shows it."""
    from datetime import datetime, timedelta
    from nbgrader.api import Gradebook
    from grader.course.autograde import mark_late
    course = tmp_path / "course"
    due = datetime(2026, 11, 30, 12, 0)
    course.mkdir()
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])  # its alembic
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        gradebook.add_assignment("attention", duedate=due)
        for student, submitted in (("reference", due - timedelta(hours=1)), ("leaky", due + timedelta(hours=3))):
            gradebook.add_student(student)
            gradebook.add_submission("attention", student, timestamp=submitted)
            shutil.copytree(graded / "class" / student, course / "results" / student)
    mark_late(course, "attention", ["reference", "leaky", "nobody"])
    late = {s: json.loads((course / "results" / s / "results.json").read_text())["extra_data"]["seconds_late"]
            for s in ("reference", "leaky")}
    assert late == {"reference": 0.0, "leaky": 3 * 3600.0}
    out = tmp_path / "report.html"
    proc = run_grader("report", "--course", course, "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = out.read_text()
    assert "<td data-value='10800'>late by 3.0 h</td>" in page and "<td data-value='0'>on time</td>" in page
