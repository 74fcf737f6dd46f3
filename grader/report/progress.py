"""Progress while something long runs (a grading, a class): a bar on a terminal, plain lines elsewhere (CI logs,
make's output, a notebook), so a log never fills with bar redraws."""

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class ProgressShown:
    """with ProgressShown(console, "grading") as progress: progress.advance(done, total, "row_softmax", line=...)

    On a terminal the bar shows done/total and the description; `line`, when given, is printed above it. Elsewhere
    only lines are printed: `line`, or "<what> <description> ..." each time the description changes."""

    def __init__(self, console=None, what="grading", total=None, transient=False):
        self.console = console or Console(highlight=False)
        self.what, self.total, self.transient = what, total, transient
        self.bar = self.task = self.last = None

    def __enter__(self):
        if self.console.is_terminal:
            self.bar = Progress(TextColumn(f"{self.what} {{task.description:<20}}"), BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(), console=self.console,
                                transient=self.transient)
            self.bar.__enter__()
            self.task = self.bar.add_task("", total=self.total)
        return self

    def advance(self, done, total, description, line=None):
        if self.bar is not None:
            self.bar.update(self.task, completed=done, total=total, description=description)
            if line:
                self.bar.console.print(line)
        elif line:
            self.console.print(line, soft_wrap=True)  # a log line stays one line, whatever the width
        elif description != self.last:
            self.console.print(f"{self.what} {description} ...")
        self.last = description

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)
