"""The worker: the only process that imports and runs the student's code.

Started by grader.sandbox.launch as `python -I -B grader/sandbox/worker.py REPLY_FD FILE` (or
`REPLY_FD --source-on-stdin`, started ahead and sent its file first, or `REPLY_FD --kernel LIBRARY FAULT_FD
[--gpu]` to run a built CUDA kernel), with
the submission's folder as working directory, requests arriving on stdin and
stdout/stderr going to a capture file the grader reads. It imports the student's
file once, then answers call requests until stdin closes. Replies go to REPLY_FD,
a pipe the student's prints cannot reach by accident.

It describes what the student's function returned or raised; it never decides a
grade. The grader treats every reply as untrusted data.
"""

import importlib.util
import os
import resource
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fence  # noqa: E402  (needs the path above; -I leaves the script's folder off sys.path)
import units  # noqa: E402
import wire  # noqa: E402
import cores  # noqa: E402

sys.path.pop(0)

import numpy as np  # noqa: E402

MAX_TEXT = 2000
LAYOUT = []  # the student's file in units (grader/sandbox/units.py): lines in the student's terms
SET_ASIDE = []  # the units that did not compile or run, with what they define and why


def _student_frames(tb, filename):
    """The traceback frames inside the student's file, as 'attention.py:12 in f: line'."""
    frames = [f for f in traceback.extract_tb(tb) if os.path.abspath(f.filename) == filename]
    return [f"{units.where(LAYOUT, filename, f.lineno)} in {f.name}: {(f.line or '').strip()}" for f in frames]


def _short(text, limit=MAX_TEXT):
    text = str(text)
    return text if len(text) <= limit else text[:limit] + " ..."


def _safe_repr(value):
    try:
        return _short(repr(value), 200)
    except BaseException:  # a hostile __repr__ must not take the worker down
        return f"<{type(value).__name__} object>"


def load_student(filename):
    """Import the student's file; return (module, None) or (None, problem header). A file that does not compile,
    or one assembled from notebook cells, is loaded unit by unit (units.py): what fails is set aside alone."""
    spec = importlib.util.spec_from_file_location("attention", filename)
    module = importlib.util.module_from_spec(spec)
    sys.modules["attention"] = module
    with open(filename, "rb") as f:
        raw = f.read()
    source = raw.decode("utf-8", "replace")
    LAYOUT[:], cells = units.split(source)
    try:
        code = None if cells else compile(raw, filename, "exec")  # bytes: Python's own decoding rules
    except SyntaxError as exc:
        if source.encode("utf-8") != raw:  # not UTF-8: no part of it reads as the student wrote it
            return None, {"status": "import_error", "type": type(exc).__name__, "message": _short(exc.msg),
                          "where": f"{os.path.basename(filename)}:{exc.lineno}",
                          "line": _short((exc.text or "").rstrip(), 300)}
        code = None  # nothing has run: load the units that compile, set the others aside
    except ValueError:  # a null byte
        code = None
    if code is None:
        SET_ASIDE[:] = units.load(LAYOUT, filename, module.__dict__)
        return module, None
    try:
        exec(code, module.__dict__)
    except BaseException as exc:  # SystemExit, KeyboardInterrupt: all are the student's import failing
        frames = _student_frames(exc.__traceback__, filename)
        return None, {"status": "import_error", "type": type(exc).__name__, "message": _short(exc),
                      "where": frames[-1].split(" in ")[0] if frames else os.path.basename(filename),
                      "traceback": frames}
    return module, None


def describe_result(result):
    """The reply header and arrays for a returned value."""
    if type(result) is np.ndarray:
        return {"status": "ok", "kind": "array"}, [result]
    if isinstance(result, np.ndarray):
        return {"status": "ok", "kind": "array_subclass", "type": type(result).__module__ + "." + type(result).__name__}, []
    if type(result) is int:
        return {"status": "ok", "kind": "int", "value": result}, []
    if type(result) is float:
        return {"status": "ok", "kind": "float", "value": result}, []
    if isinstance(result, np.generic):
        return {"status": "ok", "kind": "numpy_scalar", "type": "numpy." + type(result).__name__,
                "repr": _safe_repr(result)}, []
    return {"status": "ok", "kind": "other", "type": type(result).__name__, "repr": _safe_repr(result)}, []


def call(module, filename, request, arrays):
    name = request.get("func")
    func = getattr(module, name, None)
    if not callable(func):
        aside = next((r for r in SET_ASIDE if name in r["defines"]), None)
        if aside is not None:
            return {"status": "set_aside", "func": name, **aside}, []
        return {"status": "missing", "func": name, "set_aside": [r for r in SET_ASIDE if not r["defines"]],
                "cells": any(unit.cell for unit in LAYOUT)}, []
    args = [arrays[a["array"]] if "array" in a else a["value"] for a in request.get("args", [])]
    fence.reset_peak_memory()  # a call stopped for time is told the memory it held, even if it let go just before
    started = time.perf_counter()
    try:
        result = func(*args)
    except NotImplementedError as exc:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename) == filename]
        return {"status": "not_implemented", "in": frames[-1].name if frames else name}, []
    except BaseException as exc:  # SystemExit included: it costs this call only
        frames = _student_frames(exc.__traceback__, filename)
        return {"status": "raised", "type": type(exc).__name__, "is_value_error": isinstance(exc, ValueError),
                "message": _short(exc), "traceback": frames[-5:],
                "undefined": getattr(exc, "name", None) if isinstance(exc, NameError) else None}, []
    seconds = time.perf_counter() - started  # the student's own compute: what `make bench` sets grading against
    header, out = describe_result(result)
    header["seconds"] = seconds
    if request.get("return_args"):
        header["returned_args"] = True
        out = out + [a for a in args if isinstance(a, np.ndarray)]
    return header, out


# Kernel runs: O starts as this NaN bit pattern; if it is still there afterwards, nothing was written.
UNTOUCHED = np.uint32(0x7FC0DEAD)


def load_kernel(path, fault_fd, gpu=False):
    import ctypes
    if gpu:  # nvcc's build, linked with csrc/cuda_gpu/run_on_device.cu
        try:
            lib = ctypes.CDLL(path)
            lib.gpu_run.restype = ctypes.c_char_p
            lib.gpu_run.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 4 + [ctypes.POINTER(ctypes.c_float)]
        except (OSError, AttributeError) as exc:
            return None, {"status": "import_error", "type": type(exc).__name__, "message": _short(exc), "where": path}
        lib.on_gpu = True
        return lib, None
    try:
        lib = ctypes.CDLL(path)
        lib.causal_attention_forward.restype = None
        lib.causal_attention_forward.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 3
        lib.cuda_cpu_launch_error.restype = ctypes.c_char_p
        lib.cuda_cpu_warnings.restype = ctypes.c_char_p
        lib.cuda_cpu_launch_refused.restype = ctypes.c_char_p
        lib.cuda_cpu_occupancy.restype = ctypes.c_char_p
        lib.cuda_cpu_threads.restype = ctypes.c_char_p
        lib.cuda_cpu_profile_report.restype = ctypes.c_char_p
        lib.cuda_cpu_guarded_alloc.restype = ctypes.c_void_p
        lib.cuda_cpu_guarded_alloc.argtypes = [ctypes.c_size_t, ctypes.c_char_p]
        lib.cuda_cpu_guarded_free.argtypes = [ctypes.c_void_p]
        lib.cuda_cpu_guarded_readonly.argtypes = [ctypes.c_void_p]
        lib.cuda_cpu_report_faults_to.argtypes = [ctypes.c_int]
    except (OSError, AttributeError) as exc:
        return None, {"status": "import_error", "type": type(exc).__name__, "message": _short(exc), "where": path}
    lib.cuda_cpu_report_faults_to(fault_fd)  # a crash in the kernel is explained on this pipe before it kills us
    return lib, None


def _device_array(lib, name, shape, fill=None, source=None):
    """A float32 array in guarded memory (guard pages around it), as the kernel's device buffer `name`."""
    import ctypes
    count = int(np.prod(shape))
    address = lib.cuda_cpu_guarded_alloc(count * 4, name.encode())
    if not address:
        raise MemoryError(f"could not allocate {name}")
    array = np.ctypeslib.as_array((ctypes.c_float * count).from_address(address)).reshape(shape)
    if source is not None:
        array[...] = source
        lib.cuda_cpu_guarded_readonly(address)  # the kernel gets `const float*`: a write into it faults
    else:
        array.view(np.uint32)[...] = fill
    return address, array


def run_kernel_on_gpu(lib, request, arrays):
    """The same call on the GPU: gpu_run copies the arrays to the device and back, and can time extra runs."""
    import ctypes
    Q, K, V = (np.ascontiguousarray(a, dtype=np.float32) for a in arrays[:3])
    BH, T, d_k = Q.shape
    O = np.full(Q.shape, UNTOUCHED, dtype=np.uint32).view(np.float32)
    ms = ctypes.c_float(0.0)
    repeats = int(request.get("options", {}).get("repeats", 0))
    error = lib.gpu_run(*(a.ctypes.data for a in (Q, K, V, O)), BH, T, d_k, repeats, ctypes.byref(ms))
    untouched = bool(np.all(O.view(np.uint32) == UNTOUCHED))
    return {"status": "ok", "kind": "array", "launch_error": _short((error or b"").decode(errors="replace")),
            "untouched": untouched, "warnings": "", "device_ms": float(ms.value)}, [O]


def run_kernel(lib, request, arrays):
    """causal_attention_forward(Q, K, V, O, BH, T, d_k) on (BH, T, d_k) float32 arrays, in the asked thread order.

    The four buffers are guarded: reading or writing past either end faults (and the runtime names the buffer
    and the thread), and the inputs are read-only."""
    Q, K, V = (np.ascontiguousarray(a, dtype=np.float32) for a in arrays[:3])
    BH, T, d_k = Q.shape
    os.environ["CUDA_CPU_ORDER"] = str(request.get("options", {}).get("order", "forward"))
    buffers = [_device_array(lib, name, Q.shape, source=a) for name, a in zip("QKV", (Q, K, V))]
    buffers.append(_device_array(lib, "O", Q.shape, fill=UNTOUCHED))
    lib.cuda_cpu_begin_call()
    profiled = bool(request.get("options", {}).get("profile"))  # a profiled build (grader/cuda/profile.py)
    if profiled:
        lib.cuda_cpu_profile_begin()
    started = time.perf_counter()
    lib.causal_attention_forward(*(a for a, _ in buffers), BH, T, d_k)
    seconds = time.perf_counter() - started
    profile = (lib.cuda_cpu_profile_report() or b"").decode(errors="replace") if profiled else ""
    error = (lib.cuda_cpu_launch_error() or b"").decode(errors="replace")
    warnings = (lib.cuda_cpu_warnings() or b"").decode(errors="replace")
    refused = (lib.cuda_cpu_launch_refused() or b"").decode(errors="replace")
    occupancy = (lib.cuda_cpu_occupancy() or b"").decode(errors="replace")
    threads = (lib.cuda_cpu_threads() or b"").decode(errors="replace")
    O = buffers[3][1].copy()
    for address, _ in buffers:
        lib.cuda_cpu_guarded_free(address)
    untouched = bool(np.all(O.view(np.uint32) == UNTOUCHED))
    return {"status": "ok", "kind": "array", "launch_error": _short(error), "launch_refused": _short(refused),
            "untouched": untouched, "warnings": _short(warnings), "occupancy": _short(occupancy),
            "threads": _short(threads),
            "profile": profile[:1 << 20], "seconds": seconds}, [O]


def receive_source(arena):
    """A spare worker's file: its name and bytes, the first request on stdin, written into the working folder
    (the worker's own, in its box) before anything in it runs."""
    request, arrays = wire.read_blocking(0, arena)
    name = os.path.basename(str(request.get("name", "attention.py"))) or "attention.py"
    with open(name, "wb") as f:
        f.write(arrays[0].tobytes() if arrays else b"")
    return os.path.abspath(name)


OPTIONS = ("--memory", "--cpu", "--uid", "--processes", "--files", "--arena", "--copy-parts")


def parse_args(argv):
    """REPLY_FD FILE | REPLY_FD --kernel LIBRARY FAULT_FD [--gpu], then the limits (OPTIONS, each with a number)."""
    positional, options, i = [], {}, 0
    while i < len(argv):
        if argv[i] in OPTIONS:
            options[argv[i]] = argv[i + 1]
            i += 2
        else:
            positional.append(argv[i])
            i += 1
    return positional, options


def main():
    positional, options = parse_args(sys.argv[1:])
    reply_fd = int(positional[0])
    kernel = positional[1] == "--kernel"
    fence.fence_in(options)
    arena = wire.Arena(int(options["--arena"])) if "--arena" in options else None  # large arrays: launch.py
    cores.allow(options.get("--copy-parts", 1))  # the threads copying its answers into the arena (cores.py)
    if positional[1] == "--source-on-stdin":  # started ahead of its grading (launch.py): the file comes first
        filename = receive_source(arena)
    else:
        filename = os.path.abspath(positional[2 if kernel else 1])
    module, problem = (load_kernel(filename, int(positional[3]), gpu="--gpu" in positional[4:]) if kernel
                       else load_student(filename))
    sys.stdout.flush()
    sys.stderr.flush()
    wire.write_blocking(reply_fd, wire.encode(problem or {"status": "ready"}))
    while True:
        try:
            request, arrays = wire.read_blocking(0, arena)
        except wire.WireClosed:
            return
        if problem is not None:
            header, out = problem, []
        elif kernel:
            run = run_kernel_on_gpu if getattr(module, "on_gpu", False) else run_kernel
            header, out = run(module, request, arrays)
        else:
            header, out = call(module, filename, request, arrays)
        sys.stdout.flush()
        sys.stderr.flush()
        usage = resource.getrusage(resource.RUSAGE_SELF)  # what counts against RLIMIT_CPU: the grader keeps the rest
        header = dict(header, cpu_seconds=usage.ru_utime + usage.ru_stime)
        try:
            chunks = wire.encode(header, out, arena, wire.REPLIES)
        except (TypeError, ValueError) as exc:  # e.g. a result no JSON can hold
            chunks = wire.encode({"status": "ok", "kind": "other", "type": "unencodable", "repr": _short(exc)})
        wire.write_blocking(reply_fd, chunks)


if __name__ == "__main__":
    main()
