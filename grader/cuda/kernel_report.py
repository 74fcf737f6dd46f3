"""The kernel report beside the score: where the kernel ran, how long its build took, its run time at the
ANDREA-120M shape next to the two reference kernels' on the same machine (or, on a GPU, next to torch's
scaled_dot_product_attention, with the bandwidth), and nvcc's registers and shared memory (test_compiles_as_cuda).

Optional speed points, off by default: an instructor sets SPEED_POINTS here (and only here) to award them on a
GPU to kernels within SPEED_TARGET times the time of torch's fused attention.
"""

import hashlib
import json
import os
from grader.common.i18n import _
from grader.sandbox import runtime_words
from grader.common import records
from grader.common.layout import REFERENCE_KERNEL

SPEED_POINTS = 0  # off by default; on a GPU, points for a kernel within SPEED_TARGET x torch's SDPA time
SPEED_TARGET = 3.0



def _reference_cache(Q):
    """The file of reference_seconds at Q's shape, keyed by the reference, the runtime and the block workers (a
    class graded two at a time runs kernels on one core each: grader/common/environment.py)."""
    from grader.cuda import build as cuda_build
    from grader.common import environment
    workers = os.environ.get("CUDA_CPU_WORKERS") or str(environment.cores())
    key = hashlib.sha256((REFERENCE_KERNEL.read_text() + cuda_build.runtime_text() + str(Q.shape) + workers)
                         .encode()).hexdigest()[:16]
    return cuda_build.CACHE / "reference-times" / f"{key}.json"


def reference_seconds(Q, K, V):
    """{version: seconds} of the reference kernels at this shape on this machine, measured once per machine and
    runtime (cached under the kernel cache, build/kernels/reference-times/), so the report costs a student's grade
    nothing after the first, and a class's time limits all follow from one measurement."""
    return reference_measurement(Q, K, V)[0]


def reference_measurement(Q, K, V):
    """(reference_seconds, the machine's load when they were measured: machine_load, None if not recorded)."""
    from grader.cuda import build as cuda_build
    from grader.sandbox.client import Submission
    if not REFERENCE_KERNEL.is_file():  # the student release has no reference: no comparison
        return {}, None
    cache = _reference_cache(Q)
    folder = cache.parent
    # measured by one grading at a time (the others of a class wait and read it): every student's kernel time limit
    # (grader/cuda/time_limits.py) follows from the same measurement
    with cuda_build._locked(folder):
        if cache.exists():  # {version: seconds}, and the machine's load then ("load")
            data = json.loads(cache.read_text())
            return {int(k): v for k, v in data.items() if k.isdigit()}, data.get("load")
        times = {}
        for version in (1, 2):
            lib = cuda_build.build(REFERENCE_KERNEL, defines=[f"MICROGPT_VERSION={version}"])
            with Submission(REFERENCE_KERNEL.parent, kernel_library=lib, timeout=300) as sub:
                sub.call("causal_attention_forward", Q, K, V)
                times[version] = sub.kernel_seconds
        load = machine_load()
        cache.with_suffix(".tmp").write_text(json.dumps({**times, "load": load}))
        os.replace(cache.with_suffix(".tmp"), cache)  # only a whole measurement is ever read
    return times, load


def machine_load():
    """The machine's load (runnable processes, a minute's average) per core: a time measured at 2 on a machine of
    2 cores waited for a core about half the time."""
    from grader.common import environment
    return round(os.getloadavg()[0] / max(1, environment.cores()), 2)


def cpu_note(kernel, seconds, Q, K, V, occupancy="", threads=""):
    """The report for a kernel run on the CPU runtime; occupancy: the runtime's line per kernel launched (each
    kernel's theoretical occupancy on the GPU it stands for, and what limits it); threads: its line per kernel that
    waits (how its threads ran, thread_choice.cpp)."""
    shape = "x".join(map(str, Q.shape))
    build = kernel.build_seconds or 0.0
    built = (_("built in {seconds} s").format(seconds=f"{build:.1f}") if build >= 0.05
             else _("build: unchanged file, taken from the cache"))
    from grader.cuda import gpus
    gpu = gpus.chosen()
    checked = (_("its launch limits are checked") if getattr(kernel, "resources_checked", True) else
               _("its launch limits are checked, except registers and static shared memory (they need nvcc's counts, "
                 "and nvcc is not here)"))
    lines = [_("kernel report: ran on the CPU runtime (csrc/cuda_cpu: each CUDA thread a fiber, or a coroutine where "
               "that measured faster; one test reruns it with the threads in reverse order to catch races), standing "
               "for the {gpu} ({arch}; {var}=NAME or --gpu for another): {checked}; {built}").format(gpu=gpu.name, arch=gpu.arch, var=gpus.GPU_VAR,
                                                              checked=checked, built=built)]
    try:
        refs, refs_load = reference_measurement(Q, K, V)
    except Exception as exc:  # the comparison is a courtesy: never a reason to fail the student's test
        refs, refs_load, lines = {}, None, lines + [_("(reference kernels not timed: {why})").format(why=exc)]
    # the same figures as data, for the class report's distribution of kernel times (grader/course/class_report.py)
    records.add_data("kernel_seconds", {"shape": shape, "seconds": seconds, "device": "cpu", "load": machine_load(),
                                        "reference_seconds": {"tiled": refs.get(2), "four_kernels": refs.get(1)},
                                        "reference_load": refs_load})
    text = _("at {shape}: your kernel {seconds} s").format(shape=shape, seconds=f"{seconds:.2f}")
    if refs:
        text += "; " + _("on this machine the reference's tiled kernel takes {tiled} s and the lesson's four kernels "
                         "{four} s (CPU times say little about GPU speed: they show work and waiting)").format(
            tiled=f"{refs[2]:.2f}", four=f"{refs[1]:.2f}")
    from grader.cuda import time_limits
    text += "; " + _("a run at this size may take up to {seconds} s here ({times} x the lesson's kernel, "
                     "grader/cuda/time_limits.py)").format(seconds=f"{kernel.time_limit(Q).seconds:g}",
                                                           times=time_limits.LIMIT_TIMES)
    from grader.cuda import roofline
    text += "\n" + roofline.words(Q.shape, gpu)
    if occupancy.strip():
        text += ("\n" + _("theoretical occupancy on the {gpu} (the CUDA occupancy calculator's rules, from each "
                          "kernel's first launch):").format(gpu=gpu.name) + "\n"
                 + "\n".join(f"  {line}" for line in runtime_words.render(occupancy).strip().splitlines()))
    text += threads_words(getattr(kernel, "threads", None), threads)
    return "\n".join(lines + [text])


def threads_words(kind, threads):
    """How the threads of the kernels that wait ran: the runtime's line per kernel (measured both ways), or why
    the build left them on fibers only."""
    from grader.cuda import thread_kinds
    if threads.strip():
        return ("\n" + _("the threads of each kernel that waits (barriers, shuffles):") + "\n"
                + "\n".join(f"  {line}" for line in runtime_words.render(threads).strip().splitlines()))
    if isinstance(kind, thread_kinds.FibersOnly) and kind.why is not None:
        return "\n" + _("the kernels that wait ran on fibers only: {why}").format(why=kind.why.words())
    return ""
