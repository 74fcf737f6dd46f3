"""The student's notebook in a real JupyterLab: the released attention.ipynb (python -m grader release, then
nbgrader's generate_assignment) copied to a fresh folder with its grading/ folder, served by `jupyter lab` (installed
with nbgrader) and driven in Debian's headless chromium by Playwright, as a student would: type an answer into its
answer cell, run it and its test cell, read what the test cell shows.

- a correct row_softmax: the test cell shows full points for the public tests and no error;
- the leaking mask (solutions/wrong/mask_leaks_future.py): the failure, its hint and its picture;
- the reference kernel in the kernel's answer cell: it builds and scores full public points.

Screenshots of each step are kept in build/test-artefacts/. Minutes (a kernel build and its tests), so it runs with
`make test-browser` (GRADER_BROWSER_TEST=1), which CI runs."""

import ast
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader.course.solution_regions import is_marker
from grader.dev.controls import REFERENCE, REFERENCE_KERNEL, WRONG, Control, mutate
from helpers import ROOT, run_grader

pytestmark = pytest.mark.skipif(not os.environ.get("GRADER_BROWSER_TEST"),
                                reason="starts JupyterLab and drives chromium: run it with make test-browser")
CHROMIUM = "/usr/bin/chromium"
ARTEFACTS = ROOT / "build" / "test-artefacts"
TOKEN = "grader-browser-test"
CELL_SECONDS = {"compute_dk": 300, "row_softmax": 300, "apply_causal_mask": 300, "cuda_kernel": 900}


def _function(module_text, name):
    tree = ast.parse(module_text)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.get_source_segment(module_text, node)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab():
    """JupyterLab serving a copy of the released assignment; yields (url of the notebook, folder)."""
    yield from _served()


@pytest.fixture(scope="module")
def lab_ja():
    """The same, of a course released in Japanese (make release COURSE_LANG=ja)."""
    yield from _served("--lang", "ja")


def _served(*release_args):
    top = Path(tempfile.mkdtemp(prefix="notebook-lab-"))
    os.chmod(top, 0o755)  # grading workers run as other uids when the test runs as root
    made = run_grader("release", "--course", top / "course", "--student-repo", top / "student",
                      "--exchange", top / "exchange", *release_args)
    assert made.returncode == 0, made.stdout + made.stderr
    work = top / "work"
    shutil.copytree(top / "course" / "release" / "attention", work)
    os.chmod(work, 0o755)
    port = _free_port()
    env = {**os.environ, "HOME": str(top / "home"), "JUPYTER_CONFIG_DIR": str(top / "jupyter-config"),
           "JUPYTER_DATA_DIR": str(top / "jupyter-data"), "JUPYTER_RUNTIME_DIR": str(top / "jupyter-runtime")}
    env.pop("GRADER_REPO", None)  # the student's notebook grades with its own grading/ folder
    # every cell in the page, not only those scrolled into view (JupyterLab 4 renders a window of the notebook):
    # the test finds cells by their text
    settings = top / "lab-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    news = top / "lab-settings" / "@jupyterlab" / "apputils-extension"  # no "news?" pop-up over the screenshots
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    env["JUPYTERLAB_SETTINGS_DIR"] = str(top / "lab-settings")
    log = open(top / "jupyter.log", "w")
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--ServerApp.token={TOKEN}", f"--ServerApp.root_dir={work}", "--allow-root",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert server.poll() is None, (top / "jupyter.log").read_text()
            time.sleep(0.5)
    yield f"http://127.0.0.1:{port}/lab/tree/attention.ipynb?token={TOKEN}", work
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()
    shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="module")
def chromium():
    """One headless chromium for the module's pages (Playwright's sync API runs one at a time in a process)."""
    from playwright.sync_api import sync_playwright
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: make browser-deps installs Debian's chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def page(lab, chromium):
    yield from _opened(lab, chromium)


@pytest.fixture(scope="module")
def page_ja(lab_ja, chromium):
    yield from _opened(lab_ja, chromium)


def _opened(lab, chromium):
    url, _work = lab
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url)
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=120_000)
    # the kernel must be idle before the first cell runs
    page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=120_000)
    run_cell(page, cell_with(page, "from grader.student.notebook import grade"), 120)
    yield page
    page.close()


def cell_with(page, text, seconds=60):
    """The notebook cell whose source has this text (a Locator); waits for the notebook to render it."""
    cells = page.locator(".jp-Notebook .jp-Cell")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sources = cells.evaluate_all("cells => cells.map(c => c.querySelector('.jp-InputArea-editor')?.textContent)")
        for i, source in enumerate(sources):
            if source and text in source:
                return cells.nth(i)
        time.sleep(0.5)
    raise AssertionError(f"no cell has {text!r}")


def answer_cell(page, name):
    return cell_with(page, f"%%answer {name}")


def grading_cell(page, exercise):
    return cell_with(page, f'grade("{exercise}"')


def type_into(page, cell, text, save=True):
    """Replace a cell's text as a student would: click into it, select all, type (insert_text: the editor's own
    auto-indent and bracket closing stay out of the way, as for a paste)."""
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(text)
    if save:  # as the test cell compares the saved answer with the one run
        save_notebook(page)
    assert cell.locator(".cm-content").text_content().startswith(text.splitlines()[0].strip())


def save_notebook(page):
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')", timeout=30_000)


def run_cell(page, cell, seconds):
    """Run a cell (Shift+Enter) and wait for its execution count: the prompt says [*] while it runs."""
    before = cell.locator(".jp-InputPrompt").inner_text()
    started, prompt = None, before
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if started is None or (time.monotonic() - started > 15 and prompt == before):
            # a key pressed while the page still connects to its kernel can be lost: press again until it runs
            answer_kernel_choice(page)
            cell.locator(".jp-InputPrompt").click()  # the cell selected (command mode), editable or locked
            page.keyboard.press("Shift+Enter")
            started = time.monotonic()
        prompt = cell.locator(".jp-InputPrompt").inner_text()
        if re.search(r"\[\d+\]", prompt) and prompt != before:
            return cell.locator(".jp-OutputArea").inner_text()
        time.sleep(0.5)
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTEFACTS / "notebook-cell-did-not-finish.png"))
    raise AssertionError(f"the cell did not finish within {seconds} s: {cell.inner_text()[-2000:]}")


def answer_kernel_choice(page):
    """On a busy machine JupyterLab can ask which kernel to start although it goes on to start the notebook's own:
    its first start request failed in the page while the server carried it out. A student keeps the kernel offered
    (Python 3) and clicks Select, and so does this test. Any other dialog over the notebook fails the test, with
    its text and a screenshot."""
    dialog = page.locator(".jp-Dialog")
    if not dialog.count():
        return
    text = dialog.first.inner_text()
    if not text.startswith("Select Kernel"):
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTEFACTS / "notebook-dialog.png"))
        raise AssertionError(f"a dialog covers the notebook: {text}")
    dialog.first.locator(".jp-mod-accept").click()
    dialog.first.wait_for(state="detached", timeout=30_000)
    page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=120_000)


def shoot(page, cell, name):
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    cell.scroll_into_view_if_needed()
    cell.screenshot(path=str(ARTEFACTS / f"notebook-{name}.png"))


def errors_in(cell):
    """The error and stderr outputs a cell shows (nbgrader scores a cell with either 0)."""
    return cell.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'], "
                        ".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr']").all_inner_texts()


def graded(page, exercise, answer_name, code):
    answer = answer_cell(page, answer_name)
    type_into(page, answer, f"%%answer {answer_name}\n{code}")
    said = run_cell(page, answer, 60)
    assert f"saved your answer {answer_name}" in said, said
    cell = grading_cell(page, exercise)
    output = run_cell(page, cell, CELL_SECONDS[exercise])
    assert f"grading your answer {answer_name} as run at" in output and "not the version you ran" not in output
    return cell, output


def _points(output, exercise):
    """(earned, possible) of the public tests, from the scorecard's total line the test cell prints."""
    found = re.findall(r"(\d+(?:\.\d+)?) / (\d+(?:\.\d+)?)", output)
    assert found, output
    earned, possible = found[-1]
    return float(earned), float(possible)


def test_a_correct_row_softmax_scores_its_points(page):
    cell, output = graded(page, "row_softmax", "row_softmax", _function(REFERENCE.read_text(), "row_softmax"))
    shoot(page, cell, "row_softmax-correct")
    earned, possible = _points(output, "row_softmax")
    assert earned == possible > 0, output
    assert not errors_in(cell), errors_in(cell)
    result = cell.locator(".jp-OutputArea-executeResult").inner_text()
    assert float(result.strip().split()[-1]) == earned  # the cell's value: nbgrader's partial credit


def test_the_leaking_mask_shows_its_failure_and_picture(page):
    wrong = mutate(REFERENCE.read_text(), Control.load(WRONG / "mask_leaks_future.py").source)
    cell, output = graded(page, "apply_causal_mask", "apply_causal_mask", _function(wrong, "apply_causal_mask"))
    shoot(page, cell, "mask-leaks-future")
    earned, possible = _points(output, "apply_causal_mask")
    assert earned < possible, output
    assert "the mask leaks the future" in output
    picture = cell.locator(".jp-OutputArea-output img")
    assert picture.count() == 1 and picture.evaluate("i => i.complete && i.naturalWidth > 0")


def test_the_reference_kernel_builds_and_scores(page):
    kernel = "".join(line for line in REFERENCE_KERNEL.read_text().splitlines(keepends=True) if not is_marker(line))
    cell, output = graded(page, "cuda_kernel", "microgpt_cuda.cu", kernel)
    shoot(page, cell, "kernel-reference")
    earned, possible = _points(output, "cuda_kernel")
    assert earned == possible > 0, output
    assert "does not compile" not in output and not errors_in(cell)


def test_an_answer_run_but_not_saved_is_told_to_save_and_saving_clears_it(page):
    """The test cell compares the saved notebook with the answer run: after an edit that ran but was not saved, its
    advice is to save (running the answer again would change nothing), and once saved it says nothing more."""
    answer = answer_cell(page, "compute_dk")
    type_into(page, answer, f"%%answer compute_dk\n{_function(REFERENCE.read_text(), 'compute_dk')}", save=False)
    assert "saved your answer compute_dk" in run_cell(page, answer, 60)
    cell = grading_cell(page, "compute_dk")
    output = run_cell(page, cell, CELL_SECONDS["compute_dk"])
    shoot(page, cell, "compute_dk-run-not-saved")
    assert "the version of its answer cell you ran is not in your saved notebook yet: save the notebook" in \
        " ".join(output.split()), output
    assert "run the answer cell again" not in output
    answer.locator(".jp-InputPrompt").click()
    save_notebook(page)
    output = run_cell(page, cell, CELL_SECONDS["compute_dk"])
    assert "save the notebook" not in output and "run the answer cell again" not in output, output
    earned, possible = _points(output, "compute_dk")
    assert earned == possible > 0, output


def test_a_course_released_in_japanese_speaks_it_in_the_notebook_and_its_test_cell(page_ja):
    """The released notebook's text and its test cell's report are the catalog's Japanese: the leaking mask's hint,
    the scorecard's headings; the score is the English one's (1 of 2 public points, as solutions/wrong says)."""
    from grader.common import i18n
    from grader.course import notebook_source
    ja = i18n.translation("ja")
    heading = ja.gettext(notebook_source.HOW_IT_WORKS).splitlines()[0]
    assert heading != notebook_source.HOW_IT_WORKS.splitlines()[0]
    assert page_ja.locator(".jp-MarkdownOutput", has_text=heading.lstrip("# ").strip()).count() >= 1
    wrong = mutate(REFERENCE.read_text(), Control.load(WRONG / "mask_leaks_future.py").source)
    answer = answer_cell(page_ja, "apply_causal_mask")
    type_into(page_ja, answer, f"%%answer apply_causal_mask\n{_function(wrong, 'apply_causal_mask')}")
    run_cell(page_ja, answer, 60)
    cell = grading_cell(page_ja, "apply_causal_mask")
    output = run_cell(page_ja, cell, CELL_SECONDS["apply_causal_mask"])
    shoot(page_ja, cell, "mask-leaks-future-ja")
    leak = ja.ngettext("the mask leaks the future: {count} entry with j > i is not masked (first: row {i}, column "
                       "{j}); every j > i must be -inf", "the mask leaks the future: {count} entries with j > i are "
                       "not masked (first: row {i}, column {j}); every j > i must be -inf", 2)
    flat = " ".join(output.split())
    assert leak.split("{")[0].strip() in flat and ja.gettext("hint:") in flat, output
    assert "the mask leaks the future" not in output and ja.gettext("total") in output
    earned, possible = _points(output, "apply_causal_mask")
    assert 0 < earned < possible, output
