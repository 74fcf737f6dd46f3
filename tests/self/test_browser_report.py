"""The class report in a real browser: a small class of known submissions (the reference, the stubs and three
known-wrong controls) graded by `python -m grader batch`, the report built by `python -m grader report`, then opened
from disk in Debian's chromium (headless, driven by Playwright) with every network request refused: every plot is
drawn (an image with varied pixels), the student table sorts by a column, every link resolves to a file that
exists, the mistakes and kernel diagnostics name the students who made them. Screenshots (light, dark) are kept
in build/test-artefacts/.

It grades five submissions (a few minutes on 2 cores), so it runs with `make test-browser` (GRADER_BROWSER_TEST=1),
which CI runs."""

import base64
import io
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from grader.dev.controls import Control, WRONG, build
from helpers import ROOT, run_grader

pytestmark = pytest.mark.skipif(not os.environ.get("GRADER_BROWSER_TEST"),
                                reason="grades a small class and drives chromium: run it with make test-browser")
CHROMIUM = "/usr/bin/chromium"
ARTEFACTS = ROOT / "build" / "test-artefacts"
WRONG_STUDENTS = ("mask_leaks_future", "softmax_wrong_axis", "kernel_writes_past_O")


def browser(playwright):
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: make browser-deps installs Debian's chromium")
    return playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)


@pytest.fixture(scope="module")
def report():
    top = Path(tempfile.mkdtemp(prefix="report-class-"))
    os.chmod(top, 0o755)  # workers run as other uids when grading as root
    students = top / "class"
    for name, folder in [("reference", ROOT / "solutions"), ("stub", ROOT / "exercises")] + \
            [(name, build(Control.load(WRONG / f"{name}.py"))) for name in WRONG_STUDENTS]:
        (students / name).mkdir(parents=True)
        shutil.copy2(folder / "attention.py", students / name)
        kernel = folder / "microgpt_cuda.cu" if name != "stub" else ROOT / "csrc" / "microgpt_cuda.cu"
        shutil.copy2(kernel, students / name)
    graded = run_grader("batch", students, "--jobs", "2", "--suite", "public", timeout=1800)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    out = top / "report" / "report.html"
    made = run_grader("report", top / "class-results", "--out", out)
    assert made.returncode == 0, made.stdout + made.stderr
    yield out
    shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="module")
def page(report):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        chromium = browser(p)
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        refused = []

        def only_files(route):  # no network: anything but the file itself and data: URIs is refused, and noted
            if route.request.url.startswith(("file:", "data:")):
                route.continue_()
            else:
                refused.append(route.request.url)
                route.abort()
        context.route("**/*", only_files)
        page = context.new_page()
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        page.refused = refused
        yield page
        chromium.close()


def test_opens_from_disk_without_network(page):
    assert page.title() == "Causal self-attention: class report"
    assert page.refused == [], f"the report asked for {page.refused}"
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTEFACTS / "report.png"), full_page=True)
    # the README's picture (docs/pictures/class-report.png): the mistakes and the kernel
    top, bottom = page.locator("#mistakes").bounding_box(), page.locator("#kernel").bounding_box()
    height = bottom["y"] + bottom["height"] - top["y"] + 20
    page.screenshot(path=str(ARTEFACTS / "report-mistakes.png"), full_page=True,
                    clip={"x": 0, "y": top["y"] - 10, "width": 1280, "height": height})


def _pixels(src):
    import matplotlib.image
    assert src.startswith("data:image/png;base64,"), f"an image not embedded: {src[:60]}"
    return matplotlib.image.imread(io.BytesIO(base64.b64decode(src.split(",", 1)[1])), format="png")


def test_every_plot_is_drawn(page):
    images = page.locator("img")
    assert images.count() >= 3  # the histograms, the kernel times, at least one submission's picture
    for i in range(images.count()):
        img = images.nth(i)
        assert img.evaluate("i => i.complete && i.naturalWidth > 0"), f"image {i} not decoded by the browser"
        pixels = _pixels(img.get_attribute("src"))
        # a blank image has one colour; a plot has axes, bars and text on its background
        assert float(np.std(pixels[..., :3])) > 0.05, f"image {i} ({img.get_attribute('alt')}) is blank"


def _column(page, header):
    cells = page.locator("#student-table tbody tr").evaluate_all(
        "(rows, h) => { const i = Array.from(document.querySelectorAll('#student-table thead th'))"
        ".findIndex(th => th.textContent.trim().startsWith(h)); return rows.map(r => r.children[i].dataset.value); }",
        header)
    return cells


def test_the_student_table_sorts_by_a_column(page):
    total = page.locator("#student-table thead th", has_text="total").locator("button")
    total.click()
    up = [float(v) for v in _column(page, "total")]
    assert up == sorted(up) and len(set(up)) > 1, up
    total.click()
    down = [float(v) for v in _column(page, "total")]
    assert down == sorted(up, reverse=True)
    page.locator("#student-table thead th", has_text="student").locator("button").click()
    names = _column(page, "student")
    assert names == sorted(names)


def test_every_link_resolves(page, report):
    hrefs = page.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    files = [h for h in hrefs if not h.startswith("#")]
    assert any(h.endswith("scorecard.txt") for h in files) and any(h.endswith(".png") for h in files)
    for href in hrefs:
        if href.startswith("#"):
            assert page.locator(f"[id='{href[1:]}']").count() == 1, f"no element for the link {href}"
        else:
            assert (report.parent / href).resolve().is_file(), f"the link {href} leads nowhere"


def test_mistakes_and_diagnostics_name_their_students(page):
    mistakes = page.locator("#mistakes table tbody tr")
    rows = {cells[0]: cells for cells in mistakes.evaluate_all(  # mistake, exercise, count, who, picture
        "rows => rows.map(r => Array.from(r.children).map(c => c.innerText))")}
    assert rows["the mask leaks the future (j > i not masked)"][1:4] == ["apply_causal_mask", "1",
                                                                          "mask_leaks_future"]
    assert rows["softmax over the wrong axis"][1:4] == ["row_softmax", "1", "softmax_wrong_axis"]
    assert all("reference" not in cells[3] and "stub" not in cells[3] for cells in rows.values())
    kernel = page.locator("#kernel").inner_text()
    assert "out-of-bounds access" in kernel and "kernel_writes_past_O" in kernel
    assert "crashed" not in kernel  # the crash the runtime named counts as out-of-bounds, once
    assert "4 of 5 kernels compiled and ran" in kernel  # the stub's kernel is not implemented
    assert "reference: tiled kernel" in kernel or "No kernel timings" not in kernel
    if "No kernel timings" not in kernel:  # times measured under the class's load say so
        assert "timed while the class was graded" in kernel and "per core" in kernel, kernel
    diagnostics = _column(page, "diagnostics")
    assert "apply_causal_mask: the mask leaks the future (j > i not masked)" in diagnostics, diagnostics


WIDTHS = (1280, 1920)  # the screens the report must fit


@pytest.mark.parametrize("width", WIDTHS)
def test_the_report_fits_the_screen_no_table_scrolls_and_every_link_shows(page, width):
    page.set_viewport_size({"width": width, "height": 900})
    try:
        fit = page.evaluate("""() => {
            const over = [], view = document.documentElement.clientWidth;
            for (const el of document.querySelectorAll('table, img, figure, a, div.wide, section')) {
                const r = el.getBoundingClientRect();
                if (r.width > 0 && r.right > view + 0.5) over.push(el.tagName + ' ' + (el.id || el.className || el.textContent.slice(0, 40)) + ' ends at ' + Math.round(r.right));
            }
            for (const box of document.querySelectorAll('div.wide'))
                if (box.scrollWidth > box.clientWidth + 1) over.push('div.wide scrolls: ' + box.scrollWidth + ' > ' + box.clientWidth);
            return {over, page: document.documentElement.scrollWidth, view};
        }""")
        assert fit["over"] == [] and fit["page"] <= fit["view"], fit
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        page.locator("#students").screenshot(path=str(ARTEFACTS / f"report-students-{width}.png"))
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def test_dark_and_print(page, report):
    light = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.emulate_media(color_scheme="dark")
    dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert light != dark, "the dark theme does not change the page"
    page.screenshot(path=str(ARTEFACTS / "report-dark.png"))
    page.emulate_media(color_scheme="light")
    page.emulate_media(media="print")  # the print rules; the pass rates unfold before printing
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    assert page.locator("details[open]").count() == page.locator("details").count() > 0
    pdf = page.pdf()
    assert pdf.startswith(b"%PDF") and len(pdf) > 10_000
    (ARTEFACTS / "report.pdf").write_bytes(pdf)
