"""Every `python -m grader` command, once: its name, its module, who it is for, and one line of help.

Each command's module has add_arguments(parser) and main(args). A module is imported only when its command runs,
so `python -m grader batch` starts without pytest and torch, and a student copy that lacks the instructor's
packages (grader/course, grader/dev) simply lists fewer commands.
"""

import importlib
import importlib.util
from dataclasses import dataclass

STUDENT, INSTRUCTOR, MAINTAINER, INTERNAL = "student", "instructor", "maintainer", "internal"
AUDIENCES = {STUDENT: "for students", INSTRUCTOR: "for instructors", MAINTAINER: "for maintainers of the grader"}


@dataclass(frozen=True)
class Command:
    name: str
    module: str
    audience: str
    help: str

    def available(self):
        """True where this copy of the grader carries the module (a student copy has no grader.course)."""
        try:
            return importlib.util.find_spec(self.module) is not None
        except ModuleNotFoundError:
            return False

    def load(self):
        return importlib.import_module(self.module)


COMMANDS = (
    Command("grade", "grader.student.grade", STUDENT, "grade a submission and print the scorecard (make grade)"),
    Command("settings", "grader.common.settings", STUDENT,
            "every setting the grader reads from the environment, its value here and what it does"),
    Command("not-emulated", "grader.cuda.not_emulated", STUDENT,
            "what the CPU runtime does not emulate in a CUDA file, and what to write instead"),
    Command("doctor", "grader.student.doctor", STUDENT,
            "check this machine for everything grading needs, with the command that fixes what is missing"),
    Command("classroom", "grader.report.classroom", INSTRUCTOR,
            "grade for GitHub Classroom and print its result line (the student repository's workflow runs it)"),
    Command("release", "grader.course.release", INSTRUCTOR,
            "build the nbgrader course and the student repository (make release)"),
    Command("autograde", "grader.course.autograde", INSTRUCTOR,
            "autograde every nbgrader submission in parallel, then feedback and grades.csv (make autograde)"),
    Command("batch", "grader.course.batch", INSTRUCTOR,
            "grade a folder of student folders, here or on a Dask cluster, into results.json files and grades.csv"),
    Command("report", "grader.course.class_report", INSTRUCTOR,
            "the class report: one HTML file from every results.json of a graded class (make report)"),
    Command("gradescope", "grader.course.gradescope", INSTRUCTOR,
            "build the Gradescope autograder zip (make gradescope)"),
    Command("prebuild", "grader.course.prebuild", INSTRUCTOR,
            "compile the CPU runtime and compute every expected answer, ahead of grading (Gradescope's setup.sh)"),
    Command("leaks", "grader.course.leaks", INSTRUCTOR, "scan folders for solution code, hidden tests and seeds"),
    Command("exercises", "grader.course.make_exercises", MAINTAINER,
            "generate exercises/ and csrc/microgpt_cuda.cu from solutions/ (make exercises)"),
    Command("controls", "grader.dev.controls", MAINTAINER,
            "grade every known-wrong submission against the score it must get (make controls)"),
    Command("bench", "grader.dev.bench", MAINTAINER, "time grading the reference (make bench)"),
    Command("messages", "grader.dev.messages", MAINTAINER,
            "update the catalogs of the grader's words in each language from the code (make messages)"),
    Command("bench-batch", "grader.dev.bench_batch", MAINTAINER,
            "time batch grading of a class, --jobs 2 against --jobs 1"),
    Command("cuda-samples", "grader.dev.cuda_samples", MAINTAINER,
            "build and run NVIDIA's cuda-samples (a checkout's path) on the CPU runtime (make cuda-samples)"),
    Command("gpu-check", "grader.dev.gpu_check", MAINTAINER,
            "conformance kernels, cuda-samples, kernel controls and the reference's time on an NVIDIA GPU, compared "
            "with the CPU runtime; without a GPU, the CPU side (make gpu-check)"),
    Command("gpu-check-carry", "grader.dev.gpu_check_carry", MAINTAINER,
            "fill .gpucheck/ with what a GPU machine without network needs for gpu-check (make gpu-check-carry)"),
    Command("warm-server", "grader.warm.server", STUDENT,
            "keep grading warm between `make grade`s (the first `grade --warm` starts it; --stop ends it)"),
    Command("cell", "grader.student.cell", INTERNAL, "grade one exercise for a notebook test cell"),
    Command("from-notebook", "grader.student.from_notebook", INTERNAL,
            "write attention.py from a notebook's answer cells (Gradescope, for a notebook uploaded by mistake)"),
)


def run(argv, process_start):
    """Run the command line argv (its first word names the command); its exit status."""
    import argparse
    import sys
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), end="")
        return 0 if argv else 2
    if argv == ["--markdown"]:  # docs/README.md's table of commands
        print(markdown(), end="")
        return 0
    command = find(argv[0])
    if command is None:
        names = ", ".join(c.name for c in listed())
        print(f"python -m grader: no command {argv[0]!r}; the commands are: {names}", file=sys.stderr)
        return 2
    module = command.load()  # only now: batch's parent needs neither pytest nor torch
    parser = argparse.ArgumentParser(prog=f"python -m grader {command.name}", description=command.help)
    module.add_arguments(parser)
    args = parser.parse_args(argv[1:])
    args.process_start = process_start
    return module.main(args)


def find(name):
    return next((c for c in COMMANDS if c.name == name and c.available()), None)


def listed():
    """The commands `python -m grader --help` shows: those this copy carries, internal ones left out."""
    return [c for c in COMMANDS if c.audience != INTERNAL and c.available()]


def usage():
    lines = ["usage: python -m grader COMMAND [options]   (python -m grader COMMAND --help for its options)", ""]
    commands = listed()
    width = max(12, *(len(c.name) for c in commands))
    for audience, heading in AUDIENCES.items():
        group = [c for c in commands if c.audience == audience]
        if group:
            lines.append(f"{heading}:")
            lines += [f"  {c.name:<{width}} {c.help}" for c in group]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def markdown():
    """The table of commands docs/README.md carries (a self-test keeps it current)."""
    lines = ["| command | for | what it does |", "|---|---|---|"]
    lines += [f"| `python -m grader {c.name}` | {c.audience}s | {c.help} |" for c in COMMANDS if c.audience != INTERNAL]
    return "\n".join(lines) + "\n"
