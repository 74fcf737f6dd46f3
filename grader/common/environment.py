"""The environment the grader's processes run in: glibc heap settings, each grading's share of the cores, and
the few variables a worker keeps.

Heap: graders and workers allocate and free arrays of 100 MB (ANDREA-120M, batch 2). By default glibc maps every
allocation over 32 MB afresh and unmaps it when freed, so each test's big arrays are page-faulted in and zeroed by
the kernel again: measured, a third of a grading's CPU time was system time. With the thresholds raised, freed
arrays stay in the heap and are reused; torch also asks for huge pages. Measured on a 2-core machine
(`python -m grader grade --submission solutions`, one thread): system time 8.0 s -> 5.0 s, wall 18.7 s -> 16.5 s.
glibc reads these at process start, so they travel in the environment (grader/__main__.py re-executes itself once
with them; workers and batch gradings inherit them). The CUDA CPU runtime keeps a freed device buffer's pages for
the next buffer of its size the same way (CUDA_CPU_KEEP_FREED, in MiB: csrc/cuda_cpu/src/memory.cpp).
"""

import os

TOKEN_VAR = "GRADER_WORKER_TOKEN"  # every process a worker starts carries its sandbox's token (sandbox/isolation.py)
HEAP_SETTINGS = {"MALLOC_MMAP_THRESHOLD_": str(1 << 32), "MALLOC_TRIM_THRESHOLD_": str(1 << 34),
                 "THP_MEM_ALLOC_ENABLE": "1", "CUDA_CPU_KEEP_FREED": "512"}  # the CPU runtime's own (memory.cpp)
# GRADER_HEAP=lean, for machines where memory is the limit (Gradescope's containers: run_autograder sets it):
# freed arrays go back to the system at once. Measured on the 2-core machine (`make bench`, one grading of the
# reference, public + hidden suites, one core): peak memory of the process tree 1.52 GiB -> 0.98 GiB; a public
# `make grade` on two cores takes ~2 s longer (13.1 s -> 15.2 s, system time 2.4 s -> 5.5 s).
LEAN_HEAP_SETTINGS = {"MALLOC_MMAP_THRESHOLD_": str(1 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 20),
                      "THP_MEM_ALLOC_ENABLE": "0", "CUDA_CPU_KEEP_FREED": "0"}
HEAP_MODES = {"fast": HEAP_SETTINGS, "lean": LEAN_HEAP_SETTINGS}
# machine workarounds a worker's numpy needs too, and the CPU runtime's thread count (thread_env)
# and the GPU the CPU runtime stands for (grader/cuda/gpus.py)
WORKER_KEEPS = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                "CUDA_CPU_WORKERS", "CUDA_CPU_THREADS", "GRADER_GPU", *HEAP_SETTINGS)


def heap_mode(env=None):
    """"fast" (the default) or "lean", from GRADER_HEAP."""
    mode = (os.environ if env is None else env).get("GRADER_HEAP", "fast")
    if mode not in HEAP_MODES:
        raise SystemExit(f"GRADER_HEAP={mode!r}: choose one of {', '.join(HEAP_MODES)}")
    return mode


def heap_settings_missing():
    return [key for key in HEAP_SETTINGS if key not in os.environ]


def with_heap_settings(base=None):
    """base (default: os.environ) with the heap settings of its GRADER_HEAP mode added where not already set."""
    env = dict(os.environ if base is None else base)
    for key, value in HEAP_MODES[heap_mode(env)].items():
        env.setdefault(key, value)
    return env


def heap_env(mode, base=None):
    """base (default: os.environ) set to grade in heap mode `mode`, whatever heap settings it had."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in HEAP_SETTINGS}
    env["GRADER_HEAP"] = mode
    return with_heap_settings(env)


def write_heap_ahead(nbytes):
    """Allocate nbytes from this process's heap, write them and free them, so that its next arrays land in pages
    the kernel has already given (the warm standby does this while it waits, settings.WARM_HEAP). With the fast
    heap settings (above) a freed array stays in the heap; a page's first write costs a fault and the kernel's
    zeroing, measured on the 2-core machine at 0.1-2.7 ms per MB, varying run to run, where a rewrite costs under 0.1
    (docs/benchmarks.md). Nothing where the settings are not in effect (GRADER_HEAP=lean, or a process started without them): there the
    memory would go straight back to the kernel."""
    if nbytes <= 0 or heap_mode() != "fast" or heap_settings_missing():
        return
    import numpy as np  # here: the warm client imports this module and must stay light
    block = np.empty(nbytes, dtype=np.uint8)  # under MALLOC_MMAP_THRESHOLD_: from the heap, not a mapping of its own
    block.fill(1)
    del block


def cores():
    """The cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def thread_env(jobs):
    """The environment of one of `jobs` gradings run at once: each gets its share of the cores, for torch's and
    BLAS's threads and for the CPU runtime's block workers, so two gradings on two cores do not fight over both."""
    threads = str(max(1, cores() // max(1, jobs)))
    return dict(with_heap_settings(), OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads,
                OPENBLAS_NUM_THREADS=threads, CUDA_CPU_WORKERS=threads)


def worker_env():
    """A worker's environment: what it needs from ours, one BLAS thread (the grader's process already uses the
    cores, and results stay reproducible) and a fixed hash seed."""
    env = {k: v for k, v in os.environ.items() if k in WORKER_KEEPS}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
    return env
