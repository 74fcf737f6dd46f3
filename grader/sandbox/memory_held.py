"""What memory had to do with how a worker ended, in the student's terms.

A call stopped for time while its worker held much of its memory limit spent that time on memory (an array grown
in a loop, a temporary far larger than the answer): on a busy machine such code can reach the time limit before its
memory limit, and the student would otherwise read only "timed out". A worker killed by the machine's out-of-memory
killer (a machine with less memory free than the worker's limit) would otherwise read only "killed".

Both are read from /proc: the most memory the worker's processes held during the call (their peak resident memory,
VmHWM, which the worker resets before each call (fence.reset_peak_memory), as it may have let go of it just before the time limit: a hoard
stopped by its memory limit frees everything as its MemoryError unwinds), and the kernel's count of out-of-memory
kills (/proc/vmstat) at the worker's start and at its death.
"""

from grader.common.i18n import _
from grader.sandbox import isolation

# 1 GiB: the ANDREA-120M inputs and a vectorised numpy answer need a few hundred MB; more than this is worth a word
NOTEWORTHY_BYTES = isolation.MEMORY_LIMIT // 4


def _peak(p):
    """The peak resident memory (VmHWM) of process p, in bytes (0: ended meanwhile, or not ours to read)."""
    try:
        with open(f"/proc/{p}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def peak_bytes(pid):
    """The most resident memory pid and everything it started (the box's processes) held since the call began."""
    return sum(_peak(p) for p in (pid, *isolation.descendants(pid)))


def when_stopped(pid):
    """Words to add to a timed-out call's message ("" when its worker held little memory during the call)."""
    held = peak_bytes(pid)
    if held < NOTEWORTHY_BYTES:
        return ""
    return "; " + _("before it was stopped, the worker held up to {held} GiB of memory (the worker's memory limit is "
                    "{limit} GiB): an array that grows in a loop, or a temporary far larger than the answer, spends "
                    "its time on memory").format(held=f"{held / 2**30:.1f}", limit=isolation.MEMORY_LIMIT >> 30)


def oom_kills():
    """How many processes the machine's out-of-memory killer has killed since boot (None: not known here)."""
    try:
        with open("/proc/vmstat") as f:
            for line in f:
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def killed_by_the_machine(kills_at_start):
    """Words for a worker that died of SIGKILL, when the out-of-memory killer ran since it started ("" if not)."""
    now = oom_kills()
    if kills_at_start is None or now is None or now <= kills_at_start:
        return ""
    return ": " + _("this machine ran out of memory meanwhile, and its out-of-memory killer stops the process that "
                    "holds the most (the worker's own memory limit is {limit} GiB: this machine had less free)").format(
        limit=isolation.MEMORY_LIMIT >> 30)
