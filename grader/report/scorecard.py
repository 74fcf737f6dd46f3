"""The scorecard: one line per exercise with points earned / possible, each failing test's message, a total."""

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from grader.common.i18n import N_, _, ngettext
from grader.suite.collect import EXERCISES

MAX_MESSAGE_LINES = 14
FULL_MESSAGES = 2  # failing tests per exercise shown in full
# What to fill in, in each front end's terms: files for `make grade` and Gradescope, answer cells in the notebook.
GIVEN_ADVICE = N_("not implemented yet: causal_attention is complete; it runs once the four functions it calls "
                  "are filled in")
NOT_IMPLEMENTED_ADVICE = {
    "files": {
        "cuda_kernel": N_("not implemented yet: fill in the kernels and causal_attention_forward in "
                          "csrc/microgpt_cuda.cu"),
        "causal_attention": GIVEN_ADVICE,
        None: N_("not implemented yet: fill in {ex} in attention.py"),
    },
    "notebook": {
        "cuda_kernel": N_("not implemented yet: fill in the kernels and causal_attention_forward in the answer cell "
                          "that starts with %%answer microgpt_cuda.cu, and run it"),
        "causal_attention": GIVEN_ADVICE,
        None: N_("not implemented yet: fill in the answer cell %%answer {ex} and run it"),
    },
}


def exercise_totals(results):
    """{exercise: (earned, possible, results)} in lesson order."""
    totals = {}
    for ex in EXERCISES:
        rs = [r for r in results if r.exercise == ex]
        if rs:
            totals[ex] = (sum(r.score for r in rs), sum(r.points for r in rs), rs)
    return totals


def _status(earned, possible, rs):
    failed = [r for r in rs if not r.passed]
    if not failed:
        return Text(_("all tests pass"), style="green")
    if all(r.not_implemented for r in failed) and len(failed) == len(rs):
        return Text(_("not implemented yet"), style="yellow")
    return Text(ngettext("{failed} of {total} test fails", "{failed} of {total} tests fail", len(failed))
                .format(failed=len(failed), total=len(rs)), style="red")


def _fmt(x):
    return f"{x:g}"


def _clip(message):
    lines = message.splitlines()
    if len(lines) > MAX_MESSAGE_LINES:
        more = len(lines) - MAX_MESSAGE_LINES
        lines = lines[:MAX_MESSAGE_LINES] + [ngettext("... ({count} more line)", "... ({count} more lines)", more)
                                             .format(count=more)]
    return "\n".join(lines)


def _hint_key(line):
    """What a hint line says, without its figures: `hint: the mask leaks the future: 12 entries` -> its first
    clause; None for a line that is not a hint."""
    text, label = line.strip(), hint_label()
    if not text.startswith(label):
        return None
    return text[len(label):].replace("：", ":").split(":", 1)[0].strip()


def fail_word():
    """What marks a failed test, in this grading's language (markup-escaped)."""
    return escape(_("FAIL"))


def hint_label():
    """What starts a hint's line, in this grading's language (compare.py writes it, the scorecard looks for it)."""
    return _("hint:")


def shown_path(path):
    """A picture's path relative to the current folder where it can be: short enough to copy."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def render(run, *, title, console=None, pictures=None, front_end="files"):
    """Print the scorecard; pictures: {exercise: PNG path}, named under each failing exercise (and listed
    at the end, for passing exercises drawn on request); front_end: "files" or "notebook", whose words it uses."""
    advice = NOT_IMPLEMENTED_ADVICE[front_end]
    pictures = pictures or {}
    console = console or Console(width=None if Console().is_terminal else 110, highlight=False)
    totals = exercise_totals(run.results)
    console.print(Text(title, style="bold"))
    table = Table(show_lines=False)
    table.add_column(_("exercise"))
    table.add_column(_("points"), justify="right")
    table.add_column(_("status"))
    earned_all = possible_all = 0.0
    for ex, (earned, possible, rs) in totals.items():
        table.add_row(ex, f"{_fmt(earned)} / {_fmt(possible)}", _status(earned, possible, rs))
        earned_all += earned
        possible_all += possible
    table.add_section()
    table.add_row(Text(_("total"), style="bold"), Text(f"{_fmt(earned_all)} / {_fmt(possible_all)}", style="bold"), "")
    console.print(table)
    for ex, (earned, possible, rs) in totals.items():
        seen_notes = []
        for note in (n for r in rs for n in r.notes):
            if note not in seen_notes:
                seen_notes.append(note)
                console.print(Text(f"\n{ex}: " + _clip(note).replace("\n", "\n  "), style="cyan"), soft_wrap=True)
        for r in rs:
            if r.skipped:
                console.print(Text(f"\n{ex}: {escape(r.name.split('::', 1)[-1])} {r.message}", style="yellow"))
        failed = [r for r in rs if not r.passed]
        if not failed:
            continue
        console.print(Text(f"\n{ex}: {_fmt(earned)} / {_fmt(possible)}", style="bold"))
        if all(r.not_implemented for r in failed) and len(failed) == len(rs):
            console.print(f"  {_(advice.get(ex, advice[None])).format(ex=ex)}")
            continue
        if ex in pictures:
            console.print(Text("  " + _("picture: {path} (yours, the reference, the difference)")
                               .format(path=shown_path(pictures[ex])), style="cyan"), soft_wrap=True)
        shown, hints_shown = set(), set()
        for n, r in enumerate(failed):
            test = escape(r.name.split("::", 1)[-1])
            if r.message in shown:  # the same message (an import error, say) once per exercise is enough
                same = escape(_("(same as above)"))
                console.print(f"  [red]{fail_word()}[/red] {test}: {same}", markup=True)
                continue
            shown.add(r.message)
            points = escape(_("({points} pt)").format(points=_fmt(r.points)))
            console.print(f"  [red]{fail_word()}[/red] {test} {points}", markup=True)
            lines = r.message.splitlines()
            if n >= FULL_MESSAGES:  # later failures: the headline and the hints, not every index again
                lines = lines[:1] + [line for line in lines[1:] if line.lstrip().startswith(hint_label())]
            # a hint is said once per exercise: the same mistake on every case needs no repeating
            lines = [line for line in lines if _hint_key(line) not in hints_shown]
            hints_shown |= {_hint_key(line) for line in lines} - {None}
            console.print(Text("    " + _clip("\n".join(lines)).replace("\n", "\n    ")), soft_wrap=True)
    passing = [ex for ex in pictures if ex in totals and totals[ex][0] == totals[ex][1]]
    if passing:
        console.print("\n" + _("pictures of passing exercises: {paths}").format(
            paths=", ".join(shown_path(pictures[ex]) for ex in passing)), soft_wrap=True)
    if run.isolation and not run.isolation.startswith("full"):  # a full box is the normal case: said in results only
        console.print(Text("\n" + _("isolation: {how}").format(how=run.isolation), style="yellow"), soft_wrap=True)
    for problem in run.problems:
        console.print(Text("\n" + _("grader problem: {problem}").format(problem=problem), style="bold red"))
    return earned_all, possible_all

