"""Time a worker spent waiting for a core does not count against its time limit.

A call's limit (CALL_TIMEOUT, or the one a kernel's judge sets) is meant for the student's code, not for the
machine's other work: on a busy machine (a class graded two at a time, CI's long suites side by side on 2 cores) a
worker may wait for a core for much of its limit, and a fresh virtual machine gives memory touched for the first
time at a fraction of its usual speed, so a memory hoard reached neither its memory limit nor the size that earns
it a word on memory (memory_held.py) before the time limit stopped it. The kernel counts, per process, the time it
was ready to run but waited for a core (/proc/PID/schedstat, its second field, in ns): a call's deadline moves on by
the time its worker waited that way since the call began, up to STRETCH times its limit in all, so that a hang (a
sleep waits for nothing but itself) still ends at its limit and an endless loop at most at STRETCH times it.

The same counts tell whether a call answered at once (readable_within_run): within so much of its worker's own time
on a core, however long the worker first waited for one.
"""

import select
import time

STRETCH = 3  # a call takes at most this many times its limit in wall time, however busy the machine
READ_GRACE = 1.0  # seconds to read the rest of a reply that began before the deadline (its arrays are in the arena)


def family(pid):
    """pid and the processes it started, and theirs (a worker's box: bubblewrap, the worker, what it started), read
    from each process's list of children (a few small files, where a scan of /proc takes milliseconds)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            pass
    return found


def _schedstat(pids, field):
    """The sum over pids of one field of /proc/PID/schedstat (0: ns run on a core; 1: ns waited for one, ready to
    run), in seconds, 0 for a process gone; None where no process's could be read."""
    total, read = 0, False
    for p in pids:
        try:
            with open(f"/proc/{p}/schedstat") as f:
                total += int(f.read().split()[field])
            read = True
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9 if read else None


def waited(pids):
    """Seconds the processes pids have waited for a core, ready to run, since they started (0 for one gone)."""
    return _schedstat(pids, 1) or 0.0


def ran(pids):
    """Seconds the processes pids have run on a core since they started (0 for one gone); None where none of theirs
    could be read (a kernel without schedstats, a /proc that hides other users' processes)."""
    return _schedstat(pids, 0)


def readable_within_run(fd, pids, run, most):
    """Whether fd has something to read before the processes pids have run `run` seconds on a core from now, waiting
    `most` seconds at most in all (a process that sleeps runs for nothing); without pids, or where none of their
    times can be read, within `run` seconds of wall.

    A stub answers within microseconds of its worker's running, but on a busy machine (two gradings side by side,
    CI's suites on 2 cores) the worker may first wait for a core longer than a window of wall time: the stub would
    then be taken for a computation, and its expected answer computed (and torch imported) for nothing."""
    start, ran_before = time.monotonic(), ran(pids)
    if ran_before is None:  # no pids, or none whose time can be read: a window of wall time
        return bool(select.select([fd], [], [], run)[0])
    while True:
        now = ran(pids)  # None once every one of them is gone: no more run since
        done = 0.0 if now is None else now - ran_before
        wait = min(run - done, start + most - time.monotonic())
        if wait <= 0:
            return bool(select.select([fd], [], [], 0)[0])
        if select.select([fd], [], [], wait)[0]:
            return True


class CallClock:
    """One call's clock: its limit in seconds from now, its deadline moved on by what its worker's processes (pids)
    waited for a core meanwhile."""

    def __init__(self, pids, limit):
        self.pids, self.limit = tuple(pids), limit
        self.start = time.monotonic()
        self.deadline = self.start + limit
        self._waited_at_start = waited(self.pids)

    def moved_deadline(self):
        """The deadline, moved on by the waiting since the call began (at most STRETCH times the limit)."""
        waiting = max(0.0, waited(self.pids) - self._waited_at_start)
        return min(self.start + self.limit + waiting, self.start + STRETCH * self.limit)

    def wait_readable(self, fd):
        """Wait until fd has something to read or the call's time is up; return the deadline to read it by."""
        while True:
            left = self.deadline - time.monotonic()
            if select.select([fd], [], [], max(0.0, left))[0]:
                return max(self.deadline, time.monotonic() + READ_GRACE)
            moved = self.moved_deadline()
            if moved <= time.monotonic():
                return self.deadline  # up: the read that follows times out at once
            self.deadline = moved


def clock_for(started, limit):
    """A call's clock for the running worker `started` (launch.Started), whose processes are read at its first call."""
    if started.family is None:
        started.family = tuple(family(started.proc.pid))
    return CallClock(started.family, limit)
