"""Every setting the grader reads from the environment, once: its name, its default, who sets it and one line of
help. The modules that read a setting take its name from here; `python -m grader settings` prints them, and
docs/settings.md is that output (`python -m grader settings --markdown`; a self-test keeps it current).
"""

import os
from dataclasses import dataclass

STUDENT, INSTRUCTOR, MAINTAINER, INTERNAL = "students", "instructors", "maintainers", "the grader itself"


@dataclass(frozen=True)
class Setting:
    name: str
    default: str  # "" where unset means "not given"
    who: str      # who sets it (INTERNAL: the grader, for the processes it starts)
    help: str

    def get(self, env=None):
        """The value in env (default: os.environ), else the default."""
        return (os.environ if env is None else env).get(self.name) or self.default


LANG = Setting("GRADER_LANG", "", STUDENT, "the language of every message: en, zh, sv or ja (`--lang` sets it; else a "
               "released course's language, else the locale's)")
GPU = Setting("GRADER_GPU", "", STUDENT, "the GPU the CPU runtime stands for: a row of csrc/cuda_cpu/src/gpu_table.h "
              "(`--gpu`; default: its first)")
PROFILE = Setting("GRADER_PROFILE", "off", STUDENT, "on: the kernel report counts memory traffic (a profiled build; "
                  "`grade` turns it on unless `--no-profile`)")
WARM = Setting("GRADER_WARM", "", STUDENT, "off: every `make grade` and test cell grades cold, with no warm server")
WARM_ARENA = Setting("GRADER_WARM_ARENA", "128", STUDENT, "MiB of each half of the warm standby's shared memory "
                     "written ahead, so that a grading's arrays land in memory already there (0: none; the standby "
                     "holds twice this while idle)")
WARM_HEAP = Setting("GRADER_WARM_HEAP", "256", STUDENT, "MiB of the warm standby's own heap written ahead, so that a "
                    "grading's copies of the answers and its comparisons land in memory already there (0: none; "
                    "GRADER_HEAP=fast only; the standby holds it while idle)")
WARM_MAPPED = Setting("GRADER_WARM_MAPPED", "4096", STUDENT, "MiB of cached inputs and expected answers that the "
                      "warm standby maps ahead, the files the grading before it read, so that a grading finds them "
                      "mapped (0: none; page cache, shared: the standby holds only their page tables while idle)")
KERNEL_DEVICE = Setting("GRADER_KERNEL_DEVICE", "auto", STUDENT, "auto, cpu or gpu: where the kernel also runs, "
                        "ungraded (grades always come from the CPU runtime)")
NVCC = Setting("GRADER_NVCC", "", MAINTAINER, "none: grade as a machine without nvcc does (the compile check scores "
               "0 and stays in the maximum)")
CUDA_THREADS = Setting("GRADER_CUDA_THREADS", "auto", MAINTAINER, "auto or fibers: whether the build writes a "
                       "coroutine copy of each function that waits, for the CPU runtime to measure against fibers, and a "
                       "split copy of each kernel it can split at its barriers or shuffles (auto), or leaves every "
                       "kernel on fibers (fibers); the runtime's own CUDA_CPU_THREADS=fibers or coroutines runs each kernel "
                       "built both ways one way only")
CACHE_DIR = Setting("GRADER_CACHE_DIR", "", STUDENT, "where built kernels and expected answers are kept (default: "
                    "build/ in the checkout)")
HEAP = Setting("GRADER_HEAP", "fast", INSTRUCTOR, "fast or lean: lean trades speed for memory (Gradescope's "
               "run_autograder sets it)")
ISOLATION = Setting("GRADER_ISOLATION", "on", MAINTAINER, "on (a bubblewrap box where the machine allows it, else "
                    "the fence), fence, or off (tests of the worker seam only)")
ISOLATION_POLICY = Setting("GRADER_ISOLATION_POLICY", "", INTERNAL, "required or reduced-allowed: what gradings "
                           "started by a class's grading accept (`--require-isolation`, `--allow-reduced-isolation`)")
BWRAP = Setting("GRADER_BWRAP", "bwrap", MAINTAINER, "the bubblewrap program (a self-test points it at one that "
                "refuses namespaces)")
EXPECTED_CACHE = Setting("GRADER_EXPECTED_CACHE", "on", MAINTAINER, "off: compute every expected answer anew instead "
                         "of reading the machine's cache")
HIDDEN_SEED = Setting("GRADER_HIDDEN_SEED", "", INSTRUCTOR, "the hidden suite's seed (default: tests/hidden's seed "
                      "file, made on first use)")
EXCHANGE = Setting("GRADER_EXCHANGE", "", INSTRUCTOR, "nbgrader's exchange folder for the course (`make release "
                   "ARGS=--exchange DIR`)")
REPO = Setting("GRADER_REPO", "", INTERNAL, "at autograde, the instructor's repository whose grader the notebook's "
               "test cells use (set by the course's nbgrader_config.py)")
VERDICTS = Setting("GRADER_VERDICTS", "", INTERNAL, "at autograde, the folder of the test cells' verdicts graded "
                   "ahead (grader/course/pregrade.py)")
WARM_GRADING = Setting("GRADER_WARM_GRADING", "", INTERNAL, "1 in a grading the warm server forked")
WORKER_TOKEN = Setting("GRADER_WORKER_TOKEN", "", INTERNAL, "carried by every process a worker starts, so that the "
                       "grader finds and stops them all")
CORPUS_TEST = Setting("GRADER_CORPUS_TEST", "", MAINTAINER, "1: run the adversarial corpus's self-tests (`make "
                      "test-corpus`)")
CLASS_TEST = Setting("GRADER_CLASS_TEST", "", MAINTAINER, "1: run the nbgrader class end to end (`make test-class`)")
BROWSER_TEST = Setting("GRADER_BROWSER_TEST", "", MAINTAINER, "1: run the browser tests (`make test-browser`)")
DEPLOY_TEST = Setting("GRADER_DEPLOY_TEST", "", MAINTAINER, "1: run the deployments end to end: the Gradescope "
                      "image in its memory, a Dask cluster (`make test-deploy`)")

SETTINGS = (LANG, GPU, PROFILE, WARM, WARM_ARENA, WARM_HEAP, WARM_MAPPED, KERNEL_DEVICE, CACHE_DIR, HEAP, HIDDEN_SEED, EXCHANGE, NVCC, CUDA_THREADS,
            ISOLATION, BWRAP,
            EXPECTED_CACHE, CORPUS_TEST, CLASS_TEST, BROWSER_TEST, DEPLOY_TEST, ISOLATION_POLICY, REPO, VERDICTS, WARM_GRADING,
            WORKER_TOKEN)
BY_NAME = {s.name: s for s in SETTINGS}


def mebibytes(setting):
    """A setting given in MiB (WARM_ARENA, WARM_HEAP, WARM_MAPPED), in bytes: 0 where it is not a positive number."""
    try:
        return max(0, int(float(setting.get()) * (1 << 20)))
    except ValueError:
        return 0


def markdown():
    """docs/settings.md: a table per audience."""
    lines = ["# Settings", "", "Every setting the grader reads from the environment (grader/common/settings.py; this "
             "page is `python -m grader settings --markdown`).", ""]
    for who in (STUDENT, INSTRUCTOR, MAINTAINER, INTERNAL):
        rows = [s for s in SETTINGS if s.who == who]
        lines += [f"## Set by {who}", "", "| variable | default | what it does |", "|---|---|---|"]
        lines += [f"| `{s.name}` | {f'`{s.default}`' if s.default else '-'} | {s.help} |" for s in rows] + [""]
    return "\n".join(lines)


def add_arguments(parser):
    parser.add_argument("--markdown", action="store_true", help="print docs/settings.md")


def main(args):
    if args.markdown:
        print(markdown(), end="")
        return 0
    width = max(len(s.name) for s in SETTINGS)
    for s in SETTINGS:
        value = os.environ.get(s.name)
        now = f"= {value}" if value is not None else f"(default {s.default})" if s.default else "(unset)"
        print(f"{s.name:<{width}}  {now:<16} {s.help}")
    return 0
