"""The seam between the graded tests and the student's code.

Tests call `submission.call("row_softmax", scores)` and get back a validated
numpy array (or a Python int), or a StudentCodeError whose message speaks to the
student. The student's code runs in a worker process (grader/sandbox/worker.py); this
process only sends inputs and inspects what comes back, so nothing the student
writes can reach the comparison.
"""

import os
import subprocess
import time
from pathlib import Path

import numpy as np

from grader.common.limits import CALL_TIMEOUT
from grader.common.i18n import _
from grader.common.failures import (ForbiddenCall, ImportFailed, Missing, NotImplementedYet,
                                     StudentCodeError, TimedOut, WorkerFailed)
from grader.common.records import add_moved, add_time, timed
from grader.sandbox import isolation, launch, memory_held, replies, run_delay, runtime_words, wire

MAX_REPLY_BYTES = 1 << 32  # one array of a reply; the largest graded output is 201 MB
MAX_OUTPUT_SHOWN = 2000
IMPORT_TIMEOUT = 20.0  # seconds to import the student's file (numpy and friends take about 0.2 s)
MAX_SOURCE_BYTES = 2_000_000  # a student's attention.py: generous for code, not for pasted data


def _part(name):
    """A part of the running worker (launch.Started: its process, sandbox, pipe fds, output file, arena), or None."""
    return property(lambda self: getattr(self._started, name, None))


class Submission:
    """One student file and the worker that runs it; the worker is started on first use and after any failure."""

    _proc, _sandbox, _capture, _arena = _part("proc"), _part("sandbox"), _part("capture"), _part("arena")
    _requests, _replies, _faults = _part("requests"), _part("replies"), _part("faults")  # kernels: crash reports

    def __init__(self, folder, filename="attention.py", timeout=CALL_TIMEOUT, kernel_library=None, kernel_device="cpu",
                 read_source=None):
        """kernel_library: a built CUDA kernel (.so) to run instead of importing a Python file; kernel_device:
        "cpu" (built against the CPU runtime) or "gpu" (built by nvcc with csrc/cuda_gpu/run_on_device.cu);
        read_source: source text -> what the judge reads in the file when the worker starts (grader/judge/
        forbidden.py: .forbidden {function: [(line, name)]}, the library calls each function may not make, and
        .reaches {function: the same-file functions it calls}: a call into one that timed out is not run)."""
        self.kernel_device = kernel_device
        self.device_ms = 0.0  # GPU runs: the mean time of the extra timed runs of the last call
        self.kernel_seconds = 0.0  # CPU runs: how long the last causal_attention_forward took
        self.folder = Path(folder).resolve()
        self.path = Path(kernel_library) if kernel_library else self.folder / filename
        self.kernel = kernel_library is not None
        self.timeout = timeout
        self._call_timeout = timeout  # the limit of the call in flight (call() sets it)
        self._call_why = None  # where that limit comes from, in words, when it is not the default
        self._clock = None  # the call in flight's (run_delay.CallClock): time its worker waited for a core is not counted
        self._import_problem = None
        self._started = None  # the running worker (launch.Started), None between workers
        self._diagnostics = []  # what the runtime's last crash report named (replies.kernel_diagnostics)
        self._timed_out = {}  # function -> why: a function that timed out once is not run again
        self._oom_kills = None  # the machine's out-of-memory kills when the running worker started
        self._read_source, self._forbidden, self._reaches = read_source, {}, {}  # what the judge read in the file
        self.warnings = ""  # kernel workers: the runtime's warnings from the last call
        self.occupancy = self.threads = ""  # CPU runs, as the runtime said them: occupancy, how threads ran
        self.profile = ""  # a profiled build's run: csrc/cuda_cpu/src/profile.cpp's counts, a line per instruction
        self.cpu_limit = None  # CPU seconds of the next worker started (None: isolation.CPU_LIMIT)
        self.cpu_used = 0.0  # CPU seconds the running worker has used, as of its last answer

    # -- lifecycle ------------------------------------------------------------------------

    def _start(self):
        if not self.path.is_file():
            raise Missing(f"no {self.path.name} in {self.folder}: add your {self.path.name} there")
        size = self.path.stat().st_size
        if not self.kernel and size > MAX_SOURCE_BYTES:
            raise StudentCodeError(f"{self.path.name} is {size / 1e6:.0f} MB; the grader reads files up to "
                                   f"{MAX_SOURCE_BYTES // 1000000} MB: remove the data pasted into it")
        started = None if self.kernel or self.cpu_limit is not None else launch.adopt_spare(self.path)
        if started is None:  # no spare waiting (grader/warm): a worker of its own, with the file copied in
            sandbox = isolation.Sandbox([self.path], self.cpu_limit)  # a private folder: the submission's copy
            started = launch.start(sandbox, sandbox.folder / self.path.name, self.kernel, self.kernel_device)
        self.cpu_used = 0.0
        self._started = started
        self._oom_kills = memory_held.oom_kills()  # a later SIGKILL death: was it the machine's OOM killer?
        if self._read_source is not None:
            read = self._read_source(self.path.read_bytes().decode("utf-8", "replace"))
            self._forbidden, self._reaches = read.forbidden, read.reaches
        limit = min(self.timeout, IMPORT_TIMEOUT)
        try:
            header, _arrays = self._receive(_("starting (importing your file)"), time.monotonic() + limit, limit)
        except WorkerFailed as exc:  # an import that hangs or kills the worker would do so again: once is enough
            self._import_problem = f"{self.path.name} could not be imported: {exc}"
            raise ImportFailed(self._import_problem) from None
        self._sandbox.verify(self._proc.pid)  # checked before any input is sent
        if header.get("status") == "import_error":
            self._import_problem = replies.import_problem(self.path.name, header)
            if self.kernel:
                self._import_problem = f"the built kernel could not be loaded: {header.get('message')}"
        elif header.get("status") != "ready":
            raise self._fail(f"the worker sent an unexpected greeting {header.get('status')!r}")

    def keep_cpu_for(self, seconds):
        """The next call's worker has `seconds` of its CPU-time limit left: the running one if it has (a start costs
        ~0.2 s), else a fresh one (a slow, correct kernel must not die of the CPU the runs before it spent)."""
        if self._proc is not None and self.cpu_used + seconds <= self._sandbox.cpu_limit:
            return
        self.close()
        self.cpu_limit = max(isolation.CPU_LIMIT, int(seconds))

    def close(self):
        """Stop the worker and everything it started (its whole process group)."""
        started, self._started = self._started, None
        if started is not None:
            started.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- calls ------------------------------------------------------------------------------

    def call(self, func, *args, return_args=False, **options):
        """Run func(*args) in the worker; return its result (and, if asked, the arguments after the call)."""
        return self.submit(func, *args, return_args=return_args, **options).result()

    def submit(self, func, *args, return_args=False, timeout=None, why=None, **options):
        """Send func(*args) to the worker and return at once; .result() waits for the answer.

        The grader computes the expected answer while the worker computes the student's. options go to the
        worker with the request (a kernel run's thread order, say); timeout (seconds) overrides the default, and
        why, said when it is exceeded, says where that limit comes from.
        """
        self._call_why = why
        self._send(func, args, return_args, options, timeout)
        return PendingCall(self, func, args, return_args)

    def _answer(self, func, args, return_args):
        with timed("worker"):
            deadline = self._clock.wait_readable(self._replies)  # moved on by the time the worker waited for a core
            header, arrays = self._receive(_("running {func}").format(func=func), deadline, func=func)
        status = header.get("status")
        cpu = header.get("cpu_seconds")
        self.cpu_used = float(cpu) if isinstance(cpu, (int, float)) else self.cpu_used
        if status == "not_implemented":
            inner = header.get("in")
            if isinstance(inner, str) and inner != func:
                raise NotImplementedYet(_("{func}: not implemented yet: it calls {inner}, which still raises "
                                          "NotImplementedError").format(func=func, inner=inner))
            raise NotImplementedYet(_("{func}: not implemented yet (it still raises NotImplementedError)")
                                    .format(func=func))
        if status == "missing":
            raise Missing(replies.missing(func, self.path.name, header))
        if status == "set_aside":
            raise ImportFailed(replies.set_aside(func, self.path.name, header))
        if status == "raised":
            raise replies.raised(func, header)
        if status != "ok":
            raise StudentCodeError(f"{func}: the worker answered with an unknown status {status!r}")
        if header.get("launch_error"):  # first: a failed launch usually left O untouched too
            raise StudentCodeError(_("{func}: a kernel launch failed: {error}").format(
                func=func, error=runtime_words.render(header["launch_error"])),
                mistakes=replies.kernel_diagnostics(header["launch_error"]))
        if header.get("launch_refused"):  # the GPU it stands for would not start it (csrc/cuda_cpu/src/launch_checks.cpp)
            raise StudentCodeError(f"{func}: {runtime_words.render(header['launch_refused'])}",
                                   mistakes=["kernel_launch_refused"])
        if header.get("untouched"):
            raise NotImplementedYet(_("{func}: not implemented yet (it left O untouched)").format(func=func))
        warnings, occupancy = header.get("warnings"), header.get("occupancy")
        self.warnings = runtime_words.render(warnings) if isinstance(warnings, str) else ""
        self.occupancy, self.threads = (x if isinstance(x, str) else "" for x in (occupancy, header.get("threads")))
        self.profile = header.get("profile") if isinstance(header.get("profile"), str) else ""
        seconds = header.get("seconds")
        self.kernel_seconds = float(seconds) if isinstance(seconds, (int, float)) else 0.0
        add_time("student", self.kernel_seconds)  # the student's own compute, as the worker timed it
        add_moved("answered", sum(a.nbytes for a in arrays))
        device_ms = header.get("device_ms")
        self.device_ms = float(device_ms) if isinstance(device_ms, (int, float)) else 0.0
        result = replies.result_from(func, header, arrays)
        if return_args:
            sent = [a for a in args if isinstance(a, np.ndarray)]
            after = arrays[1 if header.get("kind") == "array" else 0:]
            if len(after) != len(sent):
                raise StudentCodeError(f"{func}: the worker did not send back the inputs it was given")
            return result, after
        return result

    def _send(self, func, args, return_args, options=None, timeout=None):
        """Send one call request; its clock (self._clock) says when its answer is due."""
        if func in self._timed_out:  # before a worker is (re)started for nothing
            raise TimedOut(_("not run: {func} already timed out in an earlier test ({when}); an endless loop costs "
                             "every test of the function, so fix that first").format(func=func,
                                                                                       when=self._timed_out[func]))
        looping = sorted(f for f in self._reaches.get(func, ()) if f in self._timed_out)
        if looping:
            raise TimedOut(_("not run: {func} calls {inner}, which already timed out in an earlier test ({when}); "
                             "fix {inner} first").format(func=func, inner=looping[0],
                                                         when=self._timed_out[looping[0]]))
        if self._proc is None and self._import_problem is None:  # an import that failed once is not retried
            self._start()
        if self._import_problem is not None:
            raise ImportFailed(self._import_problem)
        if func in self._forbidden:
            uses = "; ".join(f"{self.path.name}:{line} calls {name}" for line, name in self._forbidden[func])
            raise ForbiddenCall(_("{func} may not use a library version of what it teaches: {uses}. Write it "
                                  "yourself with numpy (the instructor's list is in grader/judge/forbidden.py)")
                                .format(func=func, uses=uses))
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        add_moved("sent", sum(a.nbytes for a in arrays))
        place = iter(range(len(arrays)))  # an array's place among the arrays sent
        spec = [{"array": next(place)} if isinstance(a, np.ndarray) else {"value": a} for a in args]
        self._call_timeout = timeout or self.timeout
        self._clock = run_delay.clock_for(self._started, self._call_timeout)
        self._output_mark = self._capture.tell()
        request = wire.encode({"op": "call", "func": func, "args": spec, "return_args": return_args,
                               "options": options or {}}, arrays, self._arena)
        try:
            with timed("worker"):
                wire.write_deadline(self._requests, request, self._clock.deadline)
        except wire.WireTimeout:
            raise self._fail(_("{func} timed out after {seconds} s").format(func=func, seconds=f"{self._call_timeout:g}"),
                             TimedOut) from None
        except wire.WireClosed:
            raise self._fail(_("the worker stopped while {func} was being sent its inputs").format(func=func)) from None

    def _receive(self, doing, deadline, limit=None, func=None):
        """The worker's next reply; doing: what it was doing, in words; func: the function it was running."""
        try:
            return wire.read_deadline(self._replies, deadline, MAX_REPLY_BYTES, self._arena)
        except wire.WireTimeout:
            limit = limit or self._call_timeout
            if func is not None and not self.kernel:  # a kernel's judge decides: a smaller run may still finish
                self._timed_out[func] = _("after {seconds} s").format(seconds=f"{limit:g}")
            why = f"; {self._call_why}" if func is not None and self._call_why else ""
            why += memory_held.when_stopped(self._proc.pid)  # read before _fail stops it
            raise self._fail(_("timed out after {seconds} s while {doing}").format(seconds=f"{limit:g}", doing=doing)
                             + why, TimedOut) from None
        except wire.WireClosed:
            raise self._fail(self._death_words(doing)) from None
        except wire.WireError as exc:
            raise self._fail(_("while {doing}, the worker sent something unreadable: {error}").format(doing=doing,
                                                                                                        error=exc)) from None

    def _death_words(self, doing):
        try:
            code = self._sandbox.exit_status(self._proc.wait(timeout=5))
        except subprocess.TimeoutExpired:
            return _("the worker closed its reply pipe while {doing}").format(doing=doing)
        if code < 0:
            name = replies.signal_name(code)
            words = _("your code crashed while {doing}: {what} ({signal})").format(
                doing=doing, what=_(replies.SIGNAL_WORDS.get(name, name)), signal=name)
            if name == "SIGKILL":
                words += memory_held.killed_by_the_machine(self._oom_kills)
            report = replies.fault_report(self._faults, self.path)
            self._diagnostics = replies.kernel_diagnostics(report)
            return f"{words}\n{runtime_words.render(report)}" if report else words
        return _("your code ended the worker process (exit code {code}) while {doing}: do not call sys.exit(), "
                 "os._exit() or quit() in attention.py").format(code=code, doing=doing)

    def _fail(self, message, kind=WorkerFailed):
        output = self.output_since_call()
        self.close()  # the next call starts a fresh worker
        if output:
            message += "\n" + _("your code printed:") + f"\n{output}"
        mistakes, self._diagnostics = self._diagnostics, []  # from the runtime's crash report, not the output
        return kind(message, mistakes=mistakes)

    def output_since_call(self):
        """What the student's code printed since the last call started, truncated."""
        if self._capture is None:
            return ""
        self._capture.flush()
        self._capture.seek(getattr(self, "_output_mark", 0))
        data = self._capture.read(MAX_OUTPUT_SHOWN + 1)
        self._capture.seek(0, os.SEEK_END)
        text = data[:MAX_OUTPUT_SHOWN].decode("utf-8", "replace").rstrip()
        return text + (" ..." if len(data) > MAX_OUTPUT_SHOWN else "")


class PendingCall:
    """A call sent to the worker whose answer has not been read yet."""

    def __init__(self, submission, func, args, return_args):
        self._sub, self._call = submission, (func, args, return_args)

    def answered_at_once(self, run=0.005, most=0.5):
        """True if the worker has started replying within `run` seconds of its own time on a core (a stub or an
        error answers in microseconds once it runs), however long it first waited for one, and `most` seconds in
        all: run_delay.readable_within_run."""
        fd, clock = self._sub._replies, self._sub._clock
        return fd is not None and run_delay.readable_within_run(fd, clock.pids if clock else (), run, most)

    def result(self):
        return self._sub._answer(*self._call)
