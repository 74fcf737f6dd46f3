"""What a worker's reply means, in the student's words: a result, or the failure (a type from
grader/common/failures.py) with a message that names the student's file and line."""

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

from grader.common.failures import BadReturn, Kind, StudentCodeError, StudentRaised
from grader.common.i18n import N_, _
from grader.common.layout import GIVEN_FUNCTIONS, STUDENT_FUNCTIONS
from grader.sandbox import isolation, runtime_words


def signal_name(code):
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


SIGNAL_WORDS = {"SIGSEGV": N_("segmentation fault"), "SIGBUS": N_("bus error"),
                "SIGFPE": N_("floating-point exception"), "SIGKILL": N_("killed"), "SIGABRT": N_("aborted"),
                "SIGXCPU": N_("killed: the worker's CPU time limit")}


# What the CPU runtime (csrc/cuda_cpu) reports about a kernel, as the diagnostic ids results.json carries for the
# class report: each id with the phrase the runtime's message starts or names it with. Read from the runtime's own
# report (a launch error, a crash report), never from what the student's code printed; the kernel controls
# (solutions/wrong/kernel_*.py, MISTAKE) check that each is recognised.
KERNEL_DIAGNOSTICS = (
    ("kernel_out_of_bounds", "out-of-bounds"),
    ("kernel_out_of_bounds", "an address outside every buffer"),
    ("kernel_out_of_bounds", "through a null pointer"),
    ("kernel_divergent_barrier", "threads wait at different barriers"),
    ("kernel_writes_input", "an input the kernel may only read"),
    ("kernel_stack_overflow", "stack overflow"),
    ("kernel_misaligned_address", "misaligned address"),
)


KERNEL_DIAGNOSTIC_NAMES = {
    "kernel_out_of_bounds": N_("out-of-bounds access"),
    "kernel_divergent_barrier": N_("divergence: threads wait at different barriers"),
    "kernel_writes_input": N_("writes into an input"),
    "kernel_stack_overflow": N_("stack overflow"),
    "kernel_misaligned_address": N_("a misaligned access (a float4 or float2 at an address not a multiple of its size)"),
    "kernel_launch_refused": N_("a launch the GPU refuses (its limits: threads, grid, shared memory)"),
}


def kernel_diagnostics(runtime_report):
    """The diagnostic ids (KERNEL_DIAGNOSTICS) the CPU runtime's report names, once each."""
    english = runtime_words.english(runtime_report)  # said in English by the runtime, whatever the grading's language
    return list(dict.fromkeys(d for d, phrase in KERNEL_DIAGNOSTICS if phrase in english))


def source_line(library, offset):
    """file:line of an instruction in a built kernel library (built with -g1: line tables), via binutils' addr2line."""
    if not re.fullmatch(r"0x[0-9a-f]+", offset) or offset == "0x0" or shutil.which("addr2line") is None:
        return ""
    try:
        out = subprocess.run(["addr2line", "-e", str(library), "-i", offset], capture_output=True, text=True,
                             timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    for line in out.splitlines():  # innermost first: the student's line, even when inlined into a runtime call
        file, _colon, number = line.rpartition(":")
        number = number.split()[0] if number.split() else ""
        if file.endswith(".cu") and number.isdigit():
            return f"{Path(file).name}:{number}"
    return ""


def _error(header):
    """"TYPE at WHERE: MESSAGE" of a worker's report of an exception."""
    return _("{type} at {where}: {message}").format(type=header.get("type"), where=header.get("where"),
                                                    message=header.get("message"))


def import_problem(filename, header):
    text = _("{file} could not be imported: {error}").format(file=filename, error=_error(header))
    if header.get("line"):
        text += f"\n    {header['line']}"
    if header.get("traceback"):
        text += "\n" + "\n".join("    " + f for f in header["traceback"])
    return text


def set_aside(func, filename, header):
    """A function whose unit (an answer cell, or its stretch of the file) did not compile or run."""
    what = _error(header)
    line = f"\n    {header['line']}" if header.get("line") else ""
    if header.get("cell"):
        return (_("{func}: its answer cell does not run: {error}").format(func=func, error=what) + line + "\n  "
                + _("only the exercises of that cell lose points: fix it and run the cell again"))
    return (_("{func} was set aside: {error}").format(func=func, error=what) + line + "\n  "
            + _("the rest of {file} was graded without it").format(file=filename))


def missing(func, filename, header):
    if header.get("cells"):  # assembled from a notebook: the student knows cells, not attention.py
        text = _("no answer defines {func}: run its answer cell (the one that starts with %%answer), and keep the "
                 "function's name and signature").format(func=func)
    else:
        text = _("{file} has no function named {func}: keep its name and signature").format(file=filename, func=func)
    for aside in header.get("set_aside") or []:  # a broken stretch that defines nothing we could name
        text += "\n  " + _("(set aside, so nothing in it was defined: {error})").format(error=_error(aside))
    return text


EXERCISE_FUNCTIONS = (*STUDENT_FUNCTIONS, *GIVEN_FUNCTIONS)  # what one exercise's function may call of another's


def raised(func, header):
    text = _("{func} raised {type}: {message}").format(func=func, type=header.get("type"),
                                                      message=header.get("message"))
    undefined = header.get("undefined")
    if isinstance(undefined, str) and undefined in EXERCISE_FUNCTIONS and undefined != func:
        text = _("{func} could not run: it calls {inner}, which is not defined (it was set aside or is missing: "
                 "{inner}'s own tests say why); {func} runs once {inner} is defined").format(func=func, inner=undefined)
    if header.get("type") in ("MemoryError", "_ArrayMemoryError"):
        text = _("{func} ran out of memory: the worker's memory limit is {gib} GiB ({type}: {message})").format(
            func=func, gib=isolation.MEMORY_LIMIT >> 30, type=header.get("type"), message=header.get("message"))
    if header.get("traceback"):
        text += "\n" + "\n".join("    " + f for f in header["traceback"])
    kind = Kind.OUT_OF_MEMORY if header.get("type") in ("MemoryError", "_ArrayMemoryError") else Kind.RAISED
    return StudentRaised(text, header.get("type"), bool(header.get("is_value_error")), kind)


def result_from(func, header, arrays):
    kind = header.get("kind")
    if kind == "array":
        if not arrays:
            raise StudentCodeError(f"{func}: the worker said it returned an array but sent none")
        return arrays[0]
    if kind == "int":
        value = header.get("value")
        if type(value) is not int:
            raise BadReturn(_("{func} returned something that is not an int").format(func=func))
        return value
    if kind == "float":
        raise BadReturn(_("{func} returned the float {value}; return a Python int (use //, not /)").format(
            func=func, value=repr(header.get("value"))))
    if kind == "array_subclass":
        raise BadReturn(_("{func} returned a {type}; return a plain numpy.ndarray").format(func=func,
                                                                                            type=header.get("type")))
    if kind == "numpy_scalar":
        raise BadReturn(_("{func} returned {type} {value}; return a numpy.ndarray (or a Python int from "
                          "compute_dk)").format(func=func, type=header.get("type"), value=header.get("repr")))
    raise BadReturn(_("{func} returned a {type} ({value}); expected a numpy.ndarray").format(
        func=func, type=header.get("type"), value=header.get("repr")))


def fault_report(faults_fd, path):
    """What the CPU runtime said on its fault pipe about a crash in the kernel, with the student's file:line (path:
    the kernel's library) when known."""
    if faults_fd is None:
        return ""
    try:
        text = os.read(faults_fd, 4096).decode("utf-8", "replace")
    except (BlockingIOError, OSError):
        return ""
    message, _pc, tail = text.partition("\n@pc ")
    where = source_line(path, tail.strip().split("\n")[0]) if tail else ""
    return message.strip()[:1000] + ("\n  " + _("at {where}").format(where=where) if where else "")
