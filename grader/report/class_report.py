"""`python -m grader report`: the class report, one self-contained HTML file built from every results.json.

    python -m grader report [RESULTS ...] [--course DIR] [--out FILE]

RESULTS: folders holding <student>/results.json (what `python -m grader batch` writes, a Gradescope export) or
results.json files; --course DIR: an nbgrader course after `make autograde` (its results/ and feedback/). The file
(default build/course/report.html) needs no server and no network: plots and pictures are embedded as data: URIs,
CSS and the table's sorting script are inline; links to each student's feedback are relative to the file, so the
report opens from disk next to the results. Light and dark follow the reader's setting; it prints.
"""

import base64
import html
import os
import statistics
import sys
import time
from pathlib import Path

from grader.common.layout import KERNEL_EXERCISE, ROOT
from grader.report import class_results, report_plots

DEFAULT_OUT = ROOT / "build" / "course" / "report.html"
ANDREA_SHAPE = "12x1024x64"


def add_arguments(parser):
    parser.add_argument("results", nargs="*", help="folders of <student>/results.json, or results.json files")
    parser.add_argument("--course", help="an nbgrader course after make autograde: its results/ and feedback/")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="the HTML file (default: build/course/report.html)")


def _e(text):
    return html.escape(str(text), quote=True)


def _img(png, alt):
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def _link(path, out, label):
    return f'<a href="{_e(Path(os.path.relpath(path, out.parent)).as_posix())}">{_e(label)}</a>'


def _fmt(x):
    return f"{x:g}"


def exercises_section(subs):
    possible, earned = {}, {}
    for sub in subs:
        for ex, (e, p) in sub.scores().items():
            possible[ex] = max(possible.get(ex, 0.0), p)
            earned.setdefault(ex, []).append(e)
    plot = report_plots.score_histograms({ex: (possible[ex], earned[ex]) for ex in possible})
    parts = ["<section id='exercises'><h2>Scores per exercise</h2>", "<figure class='plot'>",
             _img(plot, "histogram of the scores of each exercise"), "</figure>"]
    for ex, tests in class_results.pass_rates(subs).items():
        parts.append(f"<details><summary>{_e(ex)}: pass rate of each test "
                     f"(median {_fmt(statistics.median(earned[ex]))} of {_fmt(possible[ex])})</summary>")
        parts.append("<table class='rates'><thead><tr><th>test</th><th>passed</th><th>rate</th></tr></thead><tbody>")
        for name, passed, graded in tests:
            pct = 100.0 * passed / graded if graded else 0.0
            parts.append(f"<tr><td>{_e(name)}</td><td>{passed} of {graded}</td><td class='bar'>"
                         f"<span style='width:{pct:.0f}%'></span><em>{pct:.0f}%</em></td></tr>")
        parts.append("</tbody></table></details>")
    parts.append("</section>")
    return "\n".join(parts)


def mistakes_section(subs, out):
    counts = [row for row in class_results.mistake_counts(subs) if row[1] != KERNEL_EXERCISE
              or row[0] not in class_results.KERNEL_FAILURES]
    parts = ["<section id='mistakes'><h2>Most common mistakes</h2>"]
    if not counts:
        parts.append("<p>No known mistake was recognised in these results.</p></section>")
        return "\n".join(parts)
    by_name = {s.student: s for s in subs}
    parts.append("<table class='mistakes'><thead><tr><th>mistake</th><th>exercise</th><th>students</th>"
                 "<th>who</th><th>one such submission</th></tr></thead><tbody>")
    for mistake, exercise, students in counts:
        who = ", ".join(f"<a href='#student-{_e(s)}'>{_e(s)}</a>" for s in students)
        picture = next(((s, by_name[s].picture(exercise)) for s in students if by_name[s].picture(exercise)), None)
        shown = (f"<figure class='picture'>{_img(picture[1].read_bytes(), f'{exercise} of {picture[0]}')}"
                 f"<figcaption>{_e(picture[0])}: yours, the reference, the difference</figcaption></figure>"
                 if picture else "<span class='muted'>no picture</span>")
        parts.append(f"<tr><td>{_e(class_results.NAMES.get(mistake, mistake))}</td><td>{_e(exercise)}</td>"
                     f"<td class='num'>{len(students)}</td><td>{who}</td><td>{shown}</td></tr>")
    parts.append("</tbody></table></section>")
    return "\n".join(parts)


def kernel_section(subs):
    graded = [s for s in subs if s.kernel_built() is not None]
    built = [s for s in graded if s.kernel_built()]
    parts = ["<section id='kernel'><h2>The CUDA kernel</h2>",
             f"<p><strong>{len(built)} of {len(graded)}</strong> kernels compiled and ran.</p>"]
    diagnostics = [row for row in class_results.mistake_counts(subs) if row[1] == KERNEL_EXERCISE]
    if diagnostics:
        parts.append("<table class='diagnostics'><thead><tr><th>diagnostic</th><th>students</th><th>who</th></tr>"
                     "</thead><tbody>")
        for mistake, _, students in diagnostics:
            name = class_results.KERNEL_FAILURES.get(mistake) or class_results.NAMES.get(mistake, mistake)
            parts.append(f"<tr><td>{_e(name)}</td><td class='num'>{len(students)}</td><td>"
                         + ", ".join(f"<a href='#student-{_e(s)}'>{_e(s)}</a>" for s in students) + "</td></tr>")
        parts.append("</tbody></table>")
    timings = [t for t in (s.kernel_seconds() for s in subs) if t and t.get("shape") == ANDREA_SHAPE]
    if timings:
        refs = {}
        for key, label in (("tiled", "reference: tiled kernel"),
                           ("four_kernels", "reference: the lesson's four kernels")):
            values = [t["reference_seconds"].get(key) for t in timings if (t.get("reference_seconds") or {}).get(key)]
            refs[label] = statistics.median(values) if values else None
        seconds = [t["seconds"] for t in timings]
        plot = report_plots.kernel_times(seconds, refs, ANDREA_SHAPE)
        parts += [f"<p>Kernel times at {ANDREA_SHAPE} ({len(seconds)} kernels timed; median "
                  f"{statistics.median(seconds):.2f} s) next to the reference kernels on the same machine. CPU "
                  "times show work and waiting, not GPU speed.</p>",
                  f"<figure class='plot'>{_img(plot, 'kernel times next to the reference kernels')}</figure>"]
    else:
        parts.append(f"<p>No kernel timings at {ANDREA_SHAPE} in these results.</p>")
    parts.append("</section>")
    return "\n".join(parts)


def students_section(subs, out):
    exercises = list(dict.fromkeys(ex for s in subs for ex in s.scores()))
    head = "".join(f"<th data-type='number'><button>{_e(ex)}</button></th>" for ex in exercises)
    parts = ["<section id='students'><h2>Students</h2>",
             "<p class='hint'>Click a column's header to sort by it; again to reverse.</p>",
             "<div class='wide'><table id='student-table' class='sortable'><thead><tr>"
             "<th data-type='text'><button>student</button>"
             f"</th>{head}<th data-type='number'><button>total</button></th>"
             "<th data-type='number'><button>late</button></th><th data-type='text'><button>diagnostics</button></th>"
             "<th>feedback</th></tr></thead><tbody>"]
    for s in subs:
        scores = s.scores()
        cells = "".join(f"<td class='num' data-value='{scores[ex][0]:g}'>{_fmt(scores[ex][0])}</td>" if ex in scores
                        else "<td data-value='-1'>-</td>" for ex in exercises)
        late = (s.results.get("extra_data") or {}).get("seconds_late")  # autograde's, from nbgrader's gradebook
        late_text = "-" if late is None else (f"late by {late / 3600:.1f} h" if late > 0 else "on time")
        mistakes = ", ".join(class_results.KERNEL_FAILURES.get(m) or class_results.NAMES.get(m, m)
                             for m in s.mistakes())
        links = " ".join(_link(p, out, p.name) for p in s.feedback) or "<span class='muted'>none</span>"
        parts.append(f"<tr id='student-{_e(s.student)}'><td data-value='{_e(s.student)}'>{_e(s.student)}</td>{cells}"
                     f"<td class='num' data-value='{s.total:g}'>{_fmt(s.total)} / {_fmt(s.max_score)}</td>"
                     f"<td data-value='{-1 if late is None else late:g}'>{_e(late_text)}</td>"
                     f"<td data-value='{_e(mistakes)}'>{_e(mistakes) or '-'}</td><td>{links}</td></tr>")
    parts.append("</tbody></table></div></section>")
    return "\n".join(parts)


STYLE = """
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1d2125; --muted: #5f6b76; --line: #d5dbe1;
        --head: #eef2f6; --bar: #3b6ea8; --link: #1a5fb4; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #15191e; --fg: #e3e7eb; --muted: #9aa6b2; --line: #39424c; --head: #222a33; --bar: #6f9fd8;
          --link: #8cb8ff; } }
body { background: var(--bg); color: var(--fg); font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto;
       max-width: 1200px; padding: 0 1rem; }
a { color: var(--link); }
table { border-collapse: collapse; margin: .5rem 0 1rem; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: var(--head); }
th button { all: unset; cursor: pointer; font-weight: bold; }
th[aria-sort=ascending] button::after { content: " \\25B2"; }
th[aria-sort=descending] button::after { content: " \\25BC"; }
div.wide { overflow-x: auto; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.bar { min-width: 12rem; position: relative; }
td.bar span { background: var(--bar); display: block; height: 1rem; }
td.bar em { font-style: normal; position: absolute; right: .6rem; top: .3rem; }
figure.plot img { background: #ffffff; border-radius: 4px; max-width: 100%; padding: 4px; }
figure.picture img { background: #ffffff; max-width: 420px; }
figcaption, .muted, .hint { color: var(--muted); font-size: .85rem; }
@media print {
  :root { --bg: #ffffff; --fg: #000000; --head: #eeeeee; --line: #999999; --link: #000000; }
  body { margin: 0; max-width: none; }
  section, figure, tr { break-inside: avoid; }
  .hint { display: none; }
  a[href^="#"] { text-decoration: none; }
}
"""

SORT_SCRIPT = """
// printed, every test's pass rate shows: the folded sections open first
window.addEventListener("beforeprint", () => document.querySelectorAll("details").forEach(d => { d.open = true; }));
for (const table of document.querySelectorAll("table.sortable")) {
  table.querySelectorAll("thead th").forEach((th, col) => {
    const button = th.querySelector("button");
    if (!button) return;
    button.addEventListener("click", () => {
      const up = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("thead th").forEach(h => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      const number = th.dataset.type === "number";
      const key = row => { const v = row.children[col].dataset.value; return number ? parseFloat(v) : v; };
      const rows = Array.from(table.tBodies[0].rows);
      rows.sort((a, b) => { const x = key(a), y = key(b);
        const c = number ? x - y : String(x).localeCompare(String(y)); return up ? c : -c; });
      rows.forEach(row => table.tBodies[0].appendChild(row));
    });
  });
}
"""


def render(subs, out, sources):
    totals = [s.total for s in subs]
    summary = (f"{len(subs)} submissions from {', '.join(_e(s) for s in sources)}; total median "
               f"{_fmt(statistics.median(totals))} of {_fmt(max(s.max_score for s in subs))}; "
               f"made {time.strftime('%Y-%m-%d %H:%M')}")
    return "\n".join([
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        "<title>Causal self-attention: class report</title>", f"<style>{STYLE}</style></head><body>",
        "<h1>Causal self-attention: class report</h1>", f"<p class='summary'>{summary}</p>",
        "<nav><a href='#exercises'>scores</a> · <a href='#mistakes'>mistakes</a> · <a href='#kernel'>kernel</a> · "
        "<a href='#students'>students</a></nav>",
        exercises_section(subs), mistakes_section(subs, out), kernel_section(subs), students_section(subs, out),
        f"<script>{SORT_SCRIPT}</script>", "</body></html>", ""])


def build(paths, out, feedback_root=None):
    """Write the report for the results under paths to out; return the submissions it shows."""
    subs = class_results.load(paths, feedback_root)
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(subs, out, [str(p) for p in paths]))
    return subs


def main(args):
    paths = [Path(p) for p in args.results]
    feedback = None
    if args.course:
        course = Path(args.course)
        if not (course / "results").is_dir():
            print(f"grader: {course / 'results'} does not exist: run make autograde first (it writes each student's "
                  "results.json there), or give batch results (make report RESULTS=DIR)", file=sys.stderr)
            return 2
        paths.append(course / "results")
        feedback = course / "feedback"
    if not paths:
        print("grader: give the folders of results (python -m grader report DIR ...) or --course DIR",
              file=sys.stderr)
        return 2
    try:
        subs = build(paths, args.out, feedback)
    except class_results.NotResults as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    print(f"class report of {len(subs)} submissions: {Path(args.out).resolve()}")
    return 0
