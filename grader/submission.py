"""The seam between the graded tests and the student's code.

Tests call `submission.call("row_softmax", scores)` and get back a validated
numpy array (or a Python int), or a StudentCodeError whose message speaks to the
student. The student's code runs in a worker process (grader/worker.py); this
process only sends inputs and inspects what comes back, so nothing the student
writes can reach the comparison.
"""

import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from grader import wire
from grader.timings import timed

WORKER = Path(__file__).with_name("worker.py")
MAX_REPLY_BYTES = 1 << 32  # one array of a reply; the largest graded output is 201 MB
MAX_OUTPUT_SHOWN = 2000
PIPE_SIZE = 1 << 20


class StudentCodeError(Exception):
    """Something about the student's code that costs the test its points; str() is the student's message."""

    short = "error"


class NotImplementedYet(StudentCodeError):
    short = "not implemented yet"


class StudentRaised(StudentCodeError):
    def __init__(self, message, type_name, is_value_error):
        super().__init__(message)
        self.type_name, self.is_value_error = type_name, is_value_error


class BadReturn(StudentCodeError):
    short = "wrong return type"


class WorkerFailed(StudentCodeError):
    """The worker timed out, crashed, or exited: the student's code stopped answering."""


def _signal_name(code):
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


_SIGNAL_WORDS = {"SIGSEGV": "segmentation fault", "SIGBUS": "bus error", "SIGFPE": "floating-point exception",
                 "SIGKILL": "killed", "SIGABRT": "aborted"}


class Submission:
    """One student file and the worker that runs it; the worker is started on first use and after any failure."""

    def __init__(self, folder, filename="attention.py", timeout=60.0, kernel_library=None):
        """kernel_library: a built CUDA kernel (.so) to run instead of importing a Python file."""
        self.folder = Path(folder).resolve()
        self.path = Path(kernel_library) if kernel_library else self.folder / filename
        self.kernel = kernel_library is not None
        self.timeout = timeout
        self._proc = None
        self._requests = self._replies = None  # pipe fds, set while a worker runs
        self._capture = None
        self._import_problem = None

    # -- lifecycle ------------------------------------------------------------------------

    def _start(self):
        if not self.path.is_file():
            raise StudentCodeError(f"no {self.path.name} in {self.folder}: add your {self.path.name} there")
        reply_r, reply_w = os.pipe()
        self._capture = tempfile.TemporaryFile(prefix="student-output-")
        self._proc = subprocess.Popen(
            [sys.executable, "-I", str(WORKER), str(reply_w), *(["--kernel"] if self.kernel else []), str(self.path)],
            stdin=subprocess.PIPE, stdout=self._capture, stderr=self._capture, cwd=self.folder,
            pass_fds=(reply_w,), start_new_session=True, env=_worker_env())
        os.close(reply_w)
        self._replies = reply_r
        self._requests = self._proc.stdin.fileno()
        for fd in (self._requests, self._replies):
            os.set_blocking(fd, False)
            _grow_pipe(fd)
        header, _ = self._receive("starting (importing your file)", time.monotonic() + self.timeout)
        if header.get("status") == "import_error":
            self._import_problem = _describe_import_problem(self.path.name, header)
            if self.kernel:
                self._import_problem = f"the built kernel could not be loaded: {header.get('message')}"
        elif header.get("status") != "ready":
            raise self._fail(f"the worker sent an unexpected greeting {header.get('status')!r}")

    def close(self):
        """Stop the worker and everything it started (its whole process group)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            for stream in (proc.stdin,):
                try:
                    stream.close()
                except OSError:
                    pass
            os.close(self._replies)
            self._replies = None
        if self._capture is not None:
            self._capture.close()
            self._capture = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- calls ------------------------------------------------------------------------------

    def call(self, func, *args, return_args=False, **options):
        """Run func(*args) in the worker; return its result (and, if asked, the arguments after the call)."""
        return self.submit(func, *args, return_args=return_args, **options).result()

    def submit(self, func, *args, return_args=False, **options):
        """Send func(*args) to the worker and return at once; .result() waits for the answer.

        The grader computes the expected answer while the worker computes the student's. options go to the
        worker with the request (a kernel run's thread order, say).
        """
        deadline = self._send(func, args, return_args, options)
        return PendingCall(self, func, args, return_args, deadline)

    def _answer(self, func, args, return_args, deadline):
        with timed("worker"):
            header, arrays = self._receive(f"running {func}", deadline)
        status = header.get("status")
        if status == "not_implemented":
            inner = header.get("in")
            if isinstance(inner, str) and inner != func:
                raise NotImplementedYet(f"{func}: not implemented yet: it calls {inner}, "
                                        "which still raises NotImplementedError")
            raise NotImplementedYet(f"{func}: not implemented yet (it still raises NotImplementedError)")
        if status == "missing":
            raise StudentCodeError(f"{self.path.name} has no function named {func}: keep its name and signature")
        if status == "raised":
            raise _describe_raise(func, header)
        if status != "ok":
            raise StudentCodeError(f"{func}: the worker answered with an unknown status {status!r}")
        if header.get("untouched"):
            raise NotImplementedYet(f"{func}: not implemented yet (it left O untouched)")
        if header.get("launch_error"):
            raise StudentCodeError(f"{func}: a kernel launch failed: {header['launch_error']}")
        result = _result_from(func, header, arrays)
        if return_args:
            sent = [a for a in args if isinstance(a, np.ndarray)]
            after = arrays[1 if header.get("kind") == "array" else 0:]
            if len(after) != len(sent):
                raise StudentCodeError(f"{func}: the worker did not send back the inputs it was given")
            return result, after
        return result

    def _send(self, func, args, return_args, options=None):
        """Send one call request; return its deadline."""
        if self._proc is None:
            self._start()
        if self._import_problem is not None:
            raise StudentCodeError(self._import_problem)
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        spec, i = [], 0
        for a in args:
            if isinstance(a, np.ndarray):
                spec.append({"array": i})
                i += 1
            else:
                spec.append({"value": a})
        deadline = time.monotonic() + self.timeout
        self._output_mark = self._capture.tell()
        request = wire.encode({"op": "call", "func": func, "args": spec, "return_args": return_args,
                               "options": options or {}}, arrays)
        try:
            with timed("worker"):
                wire.write_deadline(self._requests, request, deadline)
        except wire.WireTimeout:
            raise self._fail(f"{func} timed out after {self.timeout:g} s") from None
        except wire.WireClosed:
            raise self._fail(f"the worker stopped while {func} was being sent its inputs") from None
        return deadline

    def _receive(self, doing, deadline):
        try:
            return wire.read_deadline(self._replies, deadline, MAX_REPLY_BYTES)
        except wire.WireTimeout:
            raise self._fail(f"timed out after {self.timeout:g} s while {doing}") from None
        except wire.WireClosed:
            raise self._fail(self._death_words(doing)) from None
        except wire.WireError as exc:
            raise self._fail(f"while {doing}, the worker sent something unreadable: {exc}") from None

    def _death_words(self, doing):
        try:
            code = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return f"the worker closed its reply pipe while {doing}"
        if code < 0:
            name = _signal_name(code)
            return f"your code crashed while {doing}: {_SIGNAL_WORDS.get(name, name)} ({name})"
        return (f"your code ended the worker process (exit code {code}) while {doing}: "
                "do not call sys.exit(), os._exit() or quit() in attention.py")

    def _fail(self, message):
        output = self.output_since_call()
        self.close()  # the next call starts a fresh worker
        if output:
            message += f"\nyour code printed:\n{output}"
        return WorkerFailed(message)

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

    def __init__(self, submission, func, args, return_args, deadline):
        self._sub, self._call = submission, (func, args, return_args, deadline)

    def answered_at_once(self, wait=0.01):
        """True if the worker has already started replying (a stub or an error answers in microseconds)."""
        fd = self._sub._replies
        return fd is not None and bool(select.select([fd], [], [], wait)[0])

    def result(self):
        return self._sub._answer(*self._call)


def _worker_env():
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")}
    # one BLAS thread: the grader's process already uses the cores, and results stay reproducible
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
    for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # machine workarounds the worker's numpy needs too
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def _grow_pipe(fd):
    try:
        import fcntl
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    except (ImportError, AttributeError, OSError):
        pass  # a smaller pipe is only slower


def _describe_import_problem(filename, header):
    text = f"{filename} could not be imported: {header.get('type')} at {header.get('where')}: {header.get('message')}"
    if header.get("line"):
        text += f"\n    {header['line']}"
    if header.get("traceback"):
        text += "\n" + "\n".join("    " + f for f in header["traceback"])
    return text


def _describe_raise(func, header):
    text = f"{func} raised {header.get('type')}: {header.get('message')}"
    if header.get("traceback"):
        text += "\n" + "\n".join("    " + f for f in header["traceback"])
    return StudentRaised(text, header.get("type"), bool(header.get("is_value_error")))


def _result_from(func, header, arrays):
    kind = header.get("kind")
    if kind == "array":
        if not arrays:
            raise StudentCodeError(f"{func}: the worker said it returned an array but sent none")
        return arrays[0]
    if kind == "int":
        value = header.get("value")
        if type(value) is not int:
            raise BadReturn(f"{func} returned something that is not an int")
        return value
    if kind == "float":
        raise BadReturn(f"{func} returned the float {header.get('value')!r}; return a Python int (use //, not /)")
    if kind == "array_subclass":
        raise BadReturn(f"{func} returned a {header.get('type')}; return a plain numpy.ndarray")
    if kind == "numpy_scalar":
        raise BadReturn(f"{func} returned {header.get('type')} {header.get('repr')}; "
                        "return a numpy.ndarray (or a Python int from compute_dk)")
    raise BadReturn(f"{func} returned a {header.get('type')} ({header.get('repr')}); expected a numpy.ndarray")
