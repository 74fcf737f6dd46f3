"""`python -m grader report`: the class report, one self-contained HTML file built from every results.json.

    python -m grader report [RESULTS ...] [--course DIR] [--out FILE]

RESULTS: folders holding <student>/results.json (what `python -m grader batch` writes, a Gradescope export) or
results.json files; --course DIR: an nbgrader course after `make autograde` (its results/ and feedback/). The file
(default build/course/report.html) needs no server and no network: plots and pictures are embedded as data: URIs,
CSS and the table's sorting script are inline; links to each student's feedback are relative to the file, so the
report opens from disk next to the results. Light and dark follow the reader's setting; it prints.
"""

import os
import statistics
import sys
import time
from pathlib import Path

from grader.common import i18n
from grader.common.i18n import N_, _, ngettext
from grader.common.layout import KERNEL_EXERCISE, ROOT
from grader.course import class_plots, class_results
from grader.course.class_report_html import (breakable as _breakable, escaped as _e, fmt as _fmt, image as _img,
                                             link as _link)
from grader.course.notebook_source import ASSIGNMENT

DEFAULT_OUT = ROOT / "build" / "course" / "report.html"
ANDREA_SHAPE = "12x1024x64"
SORT_HINT = N_("Click a column's header to sort by it; again to reverse.")


def add_arguments(parser):
    parser.add_argument("results", nargs="*", help="folders of <student>/results.json, or results.json files")
    parser.add_argument("--course", help="an nbgrader course after make autograde: its results/ and feedback/")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="the HTML file (default: build/course/report.html)")


def exercises_section(subs):
    possible, earned = {}, {}
    for sub in subs:
        for ex, (e, p) in sub.scores().items():
            possible[ex] = max(possible.get(ex, 0.0), p)
            earned.setdefault(ex, []).append(e)
    plot = class_plots.score_histograms({ex: (possible[ex], earned[ex]) for ex in possible})
    parts = ["<section id='exercises'><h2>" + _e(_("Scores per exercise")) + "</h2>", "<figure class='plot'>",
             _img(plot, _("histogram of the scores of each exercise")), "</figure>"]
    for ex, tests in class_results.pass_rates(subs).items():
        summary = _("{exercise}: pass rate of each test (median {median} of {possible})").format(
            exercise=ex, median=_fmt(statistics.median(earned[ex])), possible=_fmt(possible[ex]))
        parts.append(f"<details><summary>{_e(summary)}</summary>")
        heads = "".join(f"<th>{_e(h)}</th>" for h in (_("test"), _("passed"), _("rate")))
        parts.append(f"<table class='rates'><thead><tr>{heads}</tr></thead><tbody>")
        for name, passed, graded in tests:
            pct = 100.0 * passed / graded if graded else 0.0
            of = _e(_("{passed} of {graded}").format(passed=passed, graded=graded))
            parts.append(f"<tr><td>{_e(name)}</td><td>{of}</td><td class='bar'>"
                         f"<span style='width:{pct:.0f}%'></span><em>{pct:.0f}%</em></td></tr>")
        parts.append("</tbody></table></details>")
    parts.append("</section>")
    return "\n".join(parts)


def mistakes_section(subs, out):
    counts = [row for row in class_results.mistake_counts(subs) if row[1] != KERNEL_EXERCISE
              or row[0] not in class_results.KERNEL_FAILURES]
    parts = ["<section id='mistakes'><h2>" + _e(_("Most common mistakes")) + "</h2>"]
    if not counts:
        parts.append("<p>" + _e(_("No known mistake was recognised in these results.")) + "</p></section>")
        return "\n".join(parts)
    by_name = {s.student: s for s in subs}
    heads = "".join(f"<th>{_e(h)}</th>" for h in (_("mistake"), _("exercise"), _("students"), _("who"),
                                                   _("one such submission")))
    parts.append(f"<table class='mistakes'><thead><tr>{heads}</tr></thead><tbody>")
    for mistake, exercise, students in counts:
        who = ", ".join(f"<a href='#student-{_e(s)}'>{_e(s)}</a>" for s in students)
        picture = next(((s, by_name[s].picture(exercise)) for s in students if by_name[s].picture(exercise)), None)
        if picture:
            caption = _e(_("{student}: yours, the reference, the difference").format(student=picture[0]))
            shown = (f"<figure class='picture'>{_img(picture[1].read_bytes(), f'{exercise}: {picture[0]}')}"
                     f"<figcaption>{caption}</figcaption></figure>")
        else:
            shown = "<span class='muted'>" + _e(_("no picture")) + "</span>"
        parts.append(f"<tr><td>{_e(class_results.name_of(mistake))}</td><td>{_e(exercise)}</td>"
                     f"<td class='num'>{len(students)}</td><td>{who}</td><td>{shown}</td></tr>")
    parts.append("</tbody></table></section>")
    return "\n".join(parts)


def kernel_section(subs):
    graded = [s for s in subs if s.kernel_built() is not None]
    built = [s for s in graded if s.kernel_built()]
    ran = ngettext("{built} of {graded} kernel compiled and ran.", "{built} of {graded} kernels compiled and ran.",
                   len(graded)).format(built=len(built), graded=len(graded))
    parts = ["<section id='kernel'><h2>" + _e(_("The CUDA kernel")) + "</h2>", f"<p>{_e(ran)}</p>"]
    diagnostics = [row for row in class_results.mistake_counts(subs) if row[1] == KERNEL_EXERCISE]
    if diagnostics:
        heads = "".join(f"<th>{_e(h)}</th>" for h in (_("diagnostic"), _("students"), _("who")))
        parts.append(f"<table class='diagnostics'><thead><tr>{heads}</tr></thead><tbody>")
        for mistake, _exercise, students in diagnostics:
            name = class_results.name_of(mistake)
            parts.append(f"<tr><td>{_e(name)}</td><td class='num'>{len(students)}</td><td>"
                         + ", ".join(f"<a href='#student-{_e(s)}'>{_e(s)}</a>" for s in students) + "</td></tr>")
        parts.append("</tbody></table>")
    timings = [t for t in (s.kernel_seconds() for s in subs) if t and t.get("shape") == ANDREA_SHAPE]
    if timings:
        refs = {}
        for key, label in (("tiled", N_("reference: tiled kernel")),
                           ("four_kernels", N_("reference: the lesson's four kernels"))):
            values = [t["reference_seconds"].get(key) for t in timings if (t.get("reference_seconds") or {}).get(key)]
            refs[label] = statistics.median(values) if values else None
        seconds = [t["seconds"] for t in timings]
        plot = class_plots.kernel_times(seconds, refs, ANDREA_SHAPE)
        said = _("Kernel times at {shape} ({count} kernels timed; median {median} s) next to the reference kernels "
                 "on the same machine. CPU times show work and waiting, not GPU speed.").format(
            shape=ANDREA_SHAPE, count=len(seconds), median=f"{statistics.median(seconds):.2f}")
        loads = [t["load"] for t in timings if t.get("load") is not None]
        ref_load = next((t["reference_load"] for t in timings if t.get("reference_load") is not None), None)
        if loads:  # the class's own load lengthens its times; the references' was another
            load = f"{statistics.median(loads):.2f}"
            said += " " + (_("The students' kernels were timed while the class was graded (median load {load} per "
                             "core), the reference kernels once (load {reference} per core): a time measured under "
                             "more load is longer.").format(load=load, reference=f"{ref_load:.2f}")
                           if ref_load is not None else
                           _("The students' kernels were timed while the class was graded (median load {load} per "
                             "core): a time measured under more load is longer.").format(load=load))
        parts += [f"<p>{_e(said)}</p>",
                  "<figure class='plot'>" + _img(plot, _("kernel times next to the reference kernels")) + "</figure>"]
    else:
        none = _("No kernel timings at {shape} in these results.").format(shape=ANDREA_SHAPE)
        parts.append(f"<p>{_e(none)}</p>")
    parts.append("</section>")
    return "\n".join(parts)


def students_section(subs, out):
    exercises = list(dict.fromkeys(ex for s in subs for ex in s.scores()))
    # a column as wide as its scores, not its name: the name may break after each underscore
    head = "".join(f"<th data-type='number'><button>{_breakable(ex)}</button></th>" for ex in exercises)
    parts = ["<section id='students'><h2>" + _e(_("Students")) + "</h2>",
             f"<p class='hint'>{_e(_(SORT_HINT))}</p>",
             "<div class='wide'><table id='student-table' class='sortable'><thead><tr>"
             "<th data-type='text'><button>" + _e(_("student")) + "</button>"
             f"</th>{head}<th data-type='number'><button>" + _e(_("total")) + "</button></th>"
             "<th data-type='number'><button>" + _e(_("late")) + "</button></th>"
             "<th data-type='text'><button>" + _e(_("diagnostics")) + "</button></th>"
             "<th>" + _e(_("feedback")) + "</th></tr></thead><tbody>"]
    for s in subs:
        scores = s.scores()
        cells = "".join(f"<td class='num' data-value='{scores[ex][0]:g}'>{_fmt(scores[ex][0])}</td>" if ex in scores
                        else "<td data-value='-1'>-</td>" for ex in exercises)
        late = (s.results.get("extra_data") or {}).get("seconds_late")  # autograde's, from nbgrader's gradebook
        late_text = "-" if late is None else (_("late by {hours} h").format(hours=f"{late / 3600:.1f}") if late > 0
                                              else _("on time"))
        by_exercise = {}  # a student's mistakes grouped by the exercise they come from
        for mistake, exercise in s.mistakes().items():
            by_exercise.setdefault(exercise, []).append(class_results.name_of(mistake))
        mistakes = "; ".join(f"{ex}: {', '.join(names)}" for ex, names in by_exercise.items())
        links = (" ".join(_link(p, out, p.name, can_break=True) for p in s.feedback)
                 or "<span class='muted'>" + _e(_("none")) + "</span>")
        name = f"<td data-value='{_e(s.student)}'>{_breakable(s.student)}</td>"
        parts.append(f"<tr id='student-{_e(s.student)}'>{name}{cells}"
                     f"<td class='num' data-value='{s.total:g}'>{_fmt(s.total)} / {_fmt(s.max_score)}</td>"
                     f"<td data-value='{-1 if late is None else late:g}'>{_e(late_text)}</td>"
                     f"<td data-value='{_e(mistakes)}'>{_breakable(mistakes) or '-'}</td><td>{links}</td></tr>")
    parts.append("</tbody></table></div></section>")
    return "\n".join(parts)


STYLE = """
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1d2125; --muted: #5f6b76; --line: #d5dbe1;
        --head: #eef2f6; --bar: #3b6ea8; --link: #1a5fb4; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #15191e; --fg: #e3e7eb; --muted: #9aa6b2; --line: #39424c; --head: #222a33; --bar: #6f9fd8;
          --link: #8cb8ff; } }
body { background: var(--bg); color: var(--fg); font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto;
       max-width: 1860px; padding: 0 1rem; }
p, h1, h2, figure.plot { max-width: 75rem; }  /* prose at a reading width; the tables take the screen's */
a { color: var(--link); }
table { border-collapse: collapse; margin: .5rem 0 1rem; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: var(--head); }
th button { all: unset; cursor: pointer; font-weight: bold; }
th[aria-sort=ascending] button::after { content: " \\25B2"; }
th[aria-sort=descending] button::after { content: " \\25BC"; }
div.wide { overflow-x: auto; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
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
    summary = ngettext("{count} submission from {sources}; total median {median} of {possible}; made {time}",
                       "{count} submissions from {sources}; total median {median} of {possible}; made {time}",
                       len(subs)).format(count=len(subs), sources=", ".join(str(s) for s in sources),
                                         median=_fmt(statistics.median(totals)),
                                         possible=_fmt(max(s.max_score for s in subs)),
                                         time=time.strftime("%Y-%m-%d %H:%M"))
    title = _e(_("Causal self-attention: class report"))
    nav = " · ".join(f"<a href='#{anchor}'>{_e(word)}</a>" for anchor, word in (
        ("exercises", _("scores")), ("mistakes", _("mistakes")), ("kernel", _("kernel")), ("students", _("students"))))
    return "\n".join([
        "<!DOCTYPE html>", f"<html lang='{i18n.chosen()}'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{title}</title>", f"<style>{STYLE}</style></head><body>",
        f"<h1>{title}</h1>", f"<p class='summary'>{_e(summary)}</p>", f"<nav>{nav}</nav>",
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
        from grader.common import i18n  # a course released in a language (make release COURSE_LANG=...) speaks it
        locale = course / "source" / ASSIGNMENT / "grading" / "grader" / "locale"  # the release's copy of grader/
        lang = i18n.course_language(locale / i18n.COURSE_FILE.name)
        if lang:
            os.environ.setdefault(i18n.LANG_VAR, lang)
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
