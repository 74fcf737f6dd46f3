"""A small class, end to end with real nbgrader and a real Jupyter kernel: generate_assignment ->
release_assignment -> each student fetch_assignment and submit through nbgrader's exchange -> collect and
autograde (python -m grader autograde --collect: one nbgrader process per student, 2 at a time) ->
generate_feedback -> export. Students: perfect, stub, partial (a known-wrong mask), malicious, and two whose one
broken answer cell must cost only its own exercises: broken_cell (an unclosed parenthesis in scale_scores, and a
kernel with one barrier missing) and no_magic (weighted_sum's cell without its %%answer line, running IPython at
top level). One class run shared by all tests.

It takes minutes (about 6 on a loaded 2-core machine: every test cell grades its exercise in full, public and
hidden), more than `make test` can give it, so it runs with `make test-class` (GRADER_CLASS_TEST=1)."""

import ast
import csv
import json
import os
import subprocess

import pytest

from grader.student import cell
from grader.course import leaks
from grader.dev.controls import REFERENCE, WRONG, Control, edit_kernel, mutate
from grader.course.release import ASSIGNMENT, COURSE_ID, nbgrader_command, run_nbgrader
from helpers import run_grader

pytestmark = pytest.mark.skipif(not os.environ.get("GRADER_CLASS_TEST"),
                                reason="the nbgrader class takes minutes: run it with make test-class")
PERFECT, STUB, PARTIAL, MALICIOUS = "perfect", "stub", "partial", "malicious"
BROKEN_CELL, NO_MAGIC = "broken_cell", "no_magic"
STUDENTS = 6

# Module-level code runs when the grader's worker imports the answers: it prints a fake score, forges results
# files wherever a naive grader might look, and tries to overwrite the other students' notebooks by relative
# paths. row_softmax ends its process.
MALICIOUS_PRELUDE = '''
import glob, os
print("row_softmax: 11 / 11 all tests pass")
print('grader-cell-score: {"score": 999}')
for folder in {os.getcwd(), os.path.dirname(os.path.abspath(__file__))}:
    for name in ("results.json", "score.json"):
        with open(os.path.join(folder, name), "w") as f:
            f.write('{"score": 999}')
for pattern in ("../*/attention/attention.ipynb", "../../*/attention/attention.ipynb",
                "../../../*/*/attention/attention.ipynb"):
    for victim in glob.glob(pattern):
        try:  # the attack must not cost the attacker its own import (a notebook it cannot write, say)
            with open(victim, "w") as f:
                f.write("{}")
        except OSError:
            pass
'''
# What the malicious student tries in the notebook's kernel, where nbgrader scores what the test cells show (an
# error 0, nothing at all full marks): an added cell that swallows every error and deletes grade(), an answer cell
# without its %%answer line that redefines grade(), test cells tagged to be skipped, and a submitted
# ipykernel_launcher.py that would become the kernel itself. Without grader/course/keep_answers_out_of_kernel.py each
# one alone earns marks the answers do not (together: full marks, measured), or takes over the kernel.
SWALLOW_ERRORS = ("get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n"
                  "del grade  # every test cell now fails with a NameError that nobody sees\n")
GRADE_ANYTHING = "def grade(exercise, suites=()):\n    return 1000.0\n"
HIJACK_KERNEL = '''import os, runpy, sys
open("KERNEL_HIJACKED", "w").close()
sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != os.getcwd()]
runpy.run_module("ipykernel_launcher", run_name="__main__")
'''


def _as_students(top, students, *args):
    """Run `nbgrader ARGS` as each student at once, from their own home (nbgrader's cache goes there), with the
    exchange and course id a student's own nbgrader config would hold. nbgrader names a submission after the
    uid's user name (pwd, not $USER or $LOGNAME), which every student shares here: --student names them."""
    procs = {}
    for student in students:
        home = top / "home" / student
        home.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "HOME": str(home), "JUPYTER_DATA_DIR": str(home / ".jupyter-data")}
        cmd = [nbgrader_command(), *args, "--course", COURSE_ID, f"--Exchange.root={top / 'exchange'}"]
        if args[0] == "submit":
            cmd += ["--student", student]
        procs[student] = subprocess.Popen(cmd, cwd=home, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                          text=True, stdin=subprocess.DEVNULL)
    for student, proc in procs.items():
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{student}: nbgrader {args[0]}\n{out}"
    return {student: top / "home" / student / ASSIGNMENT for student in students}


def _answers(source_nb):
    """{grade_id: answer cell text without solution markers}: what a student who solved everything writes."""
    out = {}
    for c in source_nb["cells"]:
        meta = c["metadata"].get("nbgrader", {})
        if meta.get("solution"):
            out[meta["grade_id"]] = "".join(l for l in c["source"].splitlines(True) if "SOLUTION" not in l)
    return out


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    top = tmp_path_factory.mktemp("class")
    course = top / "course"
    proc = run_grader("release", "--course", course, "--student-repo", top / "student", "--exchange", top / "exchange")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_nbgrader(course, "release_assignment", ASSIGNMENT)
    answers = _answers(json.loads((course / "source" / "attention" / "attention.ipynb").read_text()))
    wrong_mask = Control.load(WRONG / "mask_leaks_future.py")
    wrong_module = mutate(REFERENCE.read_text(), wrong_mask.source)
    wrong_function = next(ast.get_source_segment(wrong_module, n) for n in ast.parse(wrong_module).body
                          if isinstance(n, ast.FunctionDef) and n.name == "apply_causal_mask")
    missing_barrier = Control.load(WRONG / "kernel_missing_syncthreads.py")
    unclosed = answers["answer_scale_scores"].replace("np.swapaxes(K, -1, -2))", "np.swapaxes(K, -1, -2)", 1)
    assert unclosed != answers["answer_scale_scores"]
    students = {
        PERFECT: answers,
        BROKEN_CELL: {**answers, "answer_scale_scores": unclosed,
                      "answer_cuda_kernel": edit_kernel(answers["answer_cuda_kernel"], missing_barrier.kernel_edits)},
        NO_MAGIC: {**answers, "answer_weighted_sum": answers["answer_weighted_sum"].split("\n", 1)[1]
                   + "get_ipython().run_line_magic(\"time\", \"\")\n"},
        STUB: {},
        PARTIAL: {**answers, "answer_apply_causal_mask":
                  "%%answer apply_causal_mask\n" + wrong_function + "\n"},
        MALICIOUS: {"answer_compute_dk": answers["answer_compute_dk"] + MALICIOUS_PRELUDE,
                    "answer_scale_scores": GRADE_ANYTHING,
                    "answer_row_softmax": "%%answer row_softmax\nimport os\ndef row_softmax(scores):\n"
                                          "    os._exit(0)\n"},
    }
    folders = _as_students(top, students, "fetch_assignment", ASSIGNMENT)
    for student, edits in students.items():  # each student works in the notebook they fetched
        nb = json.loads((folders[student] / "attention.ipynb").read_text())
        for c in nb["cells"]:
            grade_id = c["metadata"].get("nbgrader", {}).get("grade_id")
            if grade_id in edits:
                c["source"] = edits[grade_id]
            if student == MALICIOUS and str(grade_id).startswith("test_"):
                c["metadata"]["tags"] = ["skip-execution"]
        if student == MALICIOUS:
            nb["cells"].insert(3, {"cell_type": "code", "id": "added", "metadata": {}, "execution_count": None,
                                   "outputs": [], "source": SWALLOW_ERRORS})
            (folders[student] / "ipykernel_launcher.py").write_text(HIJACK_KERNEL)
        (folders[student] / "attention.ipynb").write_text(json.dumps(nb))
    _as_students(top, students, "submit", ASSIGNMENT)
    first = run_grader("autograde", "--course", course, "--jobs", "2", "--collect", timeout=1500)
    again = run_grader("autograde", "--course", course, "--jobs", "2", "--collect", timeout=600)
    return course, first, again, (wrong_mask, missing_barrier)


def _grades(course):
    with open(course / "grades.csv") as f:
        return {row["student_id"]: float(row["score"]) for row in csv.DictReader(f)}


def test_each_student_gets_the_grade_the_tests_give(course):
    course, first, _, (wrong_mask, missing_barrier) = course
    assert first.returncode == 0, first.stdout + first.stderr
    points = cell.points_by_exercise(["public", "hidden"])
    full = sum(points.values())
    # the partial student is the known-wrong control: its SCORES say what each exercise must get
    partial = full - sum(points[ex] - got for ex, got in wrong_mask.scores.items())
    # malicious: a correct compute_dk; its row_softmax ends the process; scale_scores is a grade() that the
    # kernel never runs; the rest are stubs
    malicious = points["compute_dk"]
    # one broken cell costs its own exercise and causal_attention, which calls it; the kernel its control's points
    broken_cell = (full - points["scale_scores"] - points["causal_attention"]
                   - (points["cuda_kernel"] - missing_barrier.scores["cuda_kernel"]))
    no_magic = full - points["weighted_sum"] - points["causal_attention"]
    assert _grades(course) == {PERFECT: full, STUB: 0.0, PARTIAL: partial, MALICIOUS: malicious,
                               BROKEN_CELL: broken_cell, NO_MAGIC: no_magic}
    assert 0 < partial < full and 0 < malicious < full


def test_malicious_student_changed_nobody_s_files_or_grade(course):
    course, _, _, _ = course
    for student in (PERFECT, STUB, PARTIAL):
        nb = json.loads((course / "submitted" / student / "attention" / "attention.ipynb").read_text())
        assert nb.get("cells"), f"{student}'s submission was overwritten"
    assert not list((course / "submitted").rglob("results.json")) and not list(course.rglob("score.json"))
    # the fake score line printed by the malicious code is not what the cell returned
    nb = json.loads((course / "autograded" / MALICIOUS / "attention" / "attention.ipynb").read_text())
    results = ["".join(o["data"]["text/plain"]) for c in nb["cells"] for o in c.get("outputs", [])
               if o["output_type"] == "execute_result"]
    assert "999" not in " ".join(results) and len(results) == 7


def test_malicious_student_ran_no_code_in_the_notebook_kernel(course):
    course, _, _, _ = course
    nb = json.loads((course / "autograded" / MALICIOUS / "attention" / "attention.ipynb").read_text())
    added = nb["cells"][3]
    assert added["cell_type"] == "markdown" and "set_custom_exc" in "".join(added["source"])
    answer = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "answer_scale_scores")
    assert "".join(answer["source"]).startswith("%%answer scale_scores\ndef grade(")
    assert not list(course.rglob("KERNEL_HIJACKED"))
    assert not (course / "autograded" / MALICIOUS / "attention" / "ipykernel_launcher.py").exists()
    assert (course / "submitted" / MALICIOUS / "attention" / "ipykernel_launcher.py").is_file()  # it was submitted
    html = (course / "feedback" / MALICIOUS / "attention" / "attention.html").read_text()
    assert "A code cell you added was not run at grading" in html


def test_feedback_reveals_no_hidden_tests_or_solution_files(course):
    course, _, _, _ = course
    for student in (PERFECT, STUB, PARTIAL, MALICIOUS):
        folder = course / "feedback" / student / "attention"
        assert [p.name for p in folder.iterdir()] == ["attention.html"]
        html = (folder / "attention.html").read_text()
        assert "BEGIN HIDDEN TESTS" not in html and 'suites.append' not in html
    # solution code is fine in the feedback of a student who wrote it; in anyone else's it is a leak
    assert leaks.scan(course / "feedback" / STUB) == []
    for student in (PERFECT, PARTIAL, MALICIOUS):
        own = leaks.plain_text(course / "submitted" / student / "attention" / "attention.ipynb")
        assert leaks.scan(course / "feedback" / student, own=own) == []
    assert leaks.scan(course / "release") == []


def test_rerun_skips_unchanged_submissions(course):
    _, first, again, _ = course
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.count("unchanged, skipped") == STUDENTS and first.stdout.count("unchanged, skipped") == 0
    # the submissions came through nbgrader's exchange; a second collect finds nothing newer
    assert f"nbgrader collect: {STUDENTS} new, 0 updated" in first.stdout
    assert "nbgrader collect: 0 new, 0 updated" in again.stdout


def test_feedback_shows_the_picture_of_a_failing_exercise(course):
    """The partial student leaks the future in apply_causal_mask: its feedback embeds that picture (drawn on
    public inputs); the perfect student's has none."""
    course, _, _, _ = course
    html = (course / "feedback" / PARTIAL / "attention" / "attention.html").read_text()
    assert "picture of your apply_causal_mask" in html and "data:image/png;base64," in html
    perfect = (course / "feedback" / PERFECT / "attention" / "attention.html").read_text()
    assert "picture of your" not in perfect


FEEDBACK_FITS = """() => {
    const over = [], view = document.documentElement.clientWidth;
    for (const el of document.querySelectorAll('img, pre, table')) {
        const r = el.getBoundingClientRect();
        if (r.width > 0 && r.right > view + 0.5) over.push(el.tagName + ' ends at ' + Math.round(r.right));
    }
    // the outputs: unwrapped, each line still fits, so none was broken (code scrolls in its own box, as code should)
    for (const pre of document.querySelectorAll('div.output_area pre, .jp-OutputArea-output pre')) {
        const was = pre.style.whiteSpace;
        pre.style.whiteSpace = 'pre';
        if (pre.scrollWidth > pre.clientWidth + 1)
            over.push('a line of ' + (pre.textContent.split('\\n').find(l => l.length > 60) || '').slice(0, 60) + '... is '
                      + pre.scrollWidth + ' px in ' + pre.clientWidth);
        pre.style.whiteSpace = was;
    }
    return {over, page: document.documentElement.scrollWidth, view,
            outputs: document.querySelectorAll('div.output_area pre, .jp-OutputArea-output pre').length};
}"""


@pytest.mark.parametrize("width", (1280, 1920))
def test_feedback_fits_the_screen_with_no_line_broken_by_the_browser(course, width):
    """The partial student's feedback (nbgrader's HTML) in Debian's chromium: no picture, output or table wider than
    the screen, and every output line fits its box whole (the browser would break it anywhere, mid-word). Checks
    at least one output: the test cells' verdicts."""
    from playwright.sync_api import sync_playwright
    course, _, _, _ = course
    html = course / "feedback" / PARTIAL / "attention" / "attention.html"
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"], headless=True)
        page = chromium.new_page(viewport={"width": width, "height": 900})
        page.goto(html.as_uri())
        page.wait_for_load_state("load")
        fit = page.evaluate(FEEDBACK_FITS)
        chromium.close()
    assert fit["outputs"] > 0 and fit["over"] == [] and fit["page"] <= fit["view"], fit


def test_every_test_cell_showed_the_verdict_graded_ahead(course):
    """grader/course/pregrade.py predicted each test cell's answers (the malicious notebook's too, as the sanitizer left
    it), so every cell showed a verdict graded in one process instead of starting a grader of its own."""
    _, first, _, _ = course
    assert first.stdout.count("(7 of 7 test cells graded ahead in one process)") == STUDENTS, first.stdout


def test_a_broken_answer_cell_is_named_in_its_own_test_cell_only(course):
    """The broken cell's test cell names the cell and the line within it; the other exercises' cells pass."""
    course, _, _, _ = course
    nb = json.loads((course / "autograded" / BROKEN_CELL / "attention" / "attention.ipynb").read_text())
    shown = {c["metadata"]["nbgrader"]["grade_id"]: "".join(
        "".join(o.get("text", "")) for o in c.get("outputs", []) if o["output_type"] == "stream")
        for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")}
    assert "scale_scores: its answer cell does not run: SyntaxError at answer cell scale_scores, line" in \
        shown["test_scale_scores"]
    assert "attention.py" not in shown["test_scale_scores"]
    for exercise in ("compute_dk", "apply_causal_mask", "row_softmax", "weighted_sum"):
        assert "all tests pass" in shown[f"test_{exercise}"] and "SyntaxError" not in shown[f"test_{exercise}"]


def _validate(folder):
    """nbgrader's own Validate, as a student runs it in the folder they fetched (the public suite only)."""
    env = {k: v for k, v in os.environ.items() if k != "GRADER_REPO"}
    return subprocess.run([nbgrader_command(), "validate", "attention.ipynb"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=1200, stdin=subprocess.DEVNULL)


def test_validate_passes_a_correct_notebook_and_writes_nothing_beside_it(course):
    course, _, _, _ = course
    folder = course.parent / "home" / PERFECT / ASSIGNMENT
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    proc = _validate(folder)
    assert "Success! Your notebook passes all the tests." in proc.stdout, proc.stdout + proc.stderr
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before  # no grade-report/, build/, caches


def test_validate_fails_a_wrong_exercise_naming_its_tests(course):
    course, _, _, _ = course
    proc = _validate(course.parent / "home" / PARTIAL / ASSIGNMENT)
    out = proc.stdout + proc.stderr
    assert "VALIDATION FAILED" in out and "apply_causal_mask: " in out and "failing: test_" in out, out
    assert "row_softmax: " not in out.split("VALIDATION FAILED", 1)[1]  # only the wrong exercise's cell fails


def test_the_class_report_is_built_from_the_autograded_results(course):
    """Autograde leaves results.json per student (COURSE/results/); the report counts what they carry: the partial
    student's leaking mask, the broken cell's kernel NaN, each total as nbgrader's grades.csv has it."""
    course, _, _, _ = course
    out = course / "report.html"
    made = run_grader("report", "--course", course, "--out", out)
    assert made.returncode == 0, made.stdout + made.stderr
    totals = {s: json.loads((course / "results" / s / "results.json").read_text())["score"]
              for s in (PERFECT, STUB, PARTIAL, BROKEN_CELL)}
    grades = _grades(course)
    assert all(totals[s] == grades[s] for s in totals), (totals, grades)
    page = out.read_text()
    leak = page.split("the mask leaks the future (j &gt; i not masked)</td>", 1)[1].split("</tr>", 1)[0]
    assert f">{PARTIAL}<" in leak and f">{PERFECT}<" not in leak
    assert (course / "results" / PARTIAL / "pictures" / "apply_causal_mask.png").is_file()
    assert "NaN in the kernel" in page and f"href=\"feedback/{PARTIAL}/attention/attention.html\"" in page
    assert "on time" in page  # no due date: nobody is late (extra_data.seconds_late, from the gradebook)
