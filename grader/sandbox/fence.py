"""The limits a worker (worker.py) sets on itself before it reads the student's file: memory, CPU time, processes,
open files and no core dumps; in the fence as root, an empty network namespace and a uid of its own. Loaded by
worker.py from this folder (a box binds it read-only), so standard library only."""

import os


def fence_in(options):
    """Limits first (any uid may lower them), then, in the fence as root, no network and a uid of our own. Runs
    before the student's file is even read, so nothing the student writes runs with more than this. What cannot
    be done stops the worker: the grader reports it (and checks the result from outside too)."""
    import resource
    # memory is RLIMIT_DATA (the private writable memory a process holds, numpy's arrays included), not RLIMIT_AS:
    # the CUDA runtime reserves large inaccessible guard regions around each buffer (csrc/cuda_cpu/src/memory.cpp),
    # address space that costs no memory
    limits = {"--memory": resource.RLIMIT_DATA, "--processes": resource.RLIMIT_NPROC, "--files": resource.RLIMIT_NOFILE}
    for option, which in limits.items():
        if option in options:
            limit = int(options[option])
            resource.setrlimit(which, (limit, limit))
    if "--cpu" in options:
        limit = int(options["--cpu"])
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if "--uid" in options and os.geteuid() == 0:
        import ctypes
        CLONE_NEWNET = 0x40000000
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(CLONE_NEWNET) != 0:  # an empty network namespace: no network at all, or no grading
            raise SystemExit(f"worker: no network namespace: {os.strerror(ctypes.get_errno())}")
        uid = int(options["--uid"])
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise SystemExit(f"worker: still uid {os.geteuid()} after dropping to {uid}")


def reset_peak_memory():
    """Before each call: the peak resident memory (VmHWM) starts again from what the worker holds now (Linux 4.0+),
    so a call stopped for time is told of the memory it held (grader/sandbox/memory_held.py). Elsewhere the peak is
    the worker's whole life's, still fair words."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
