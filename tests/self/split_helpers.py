"""What the split-copy tests share (test_cuda_split.py, test_cuda_warp_split.py): a source's transformation, and why
its one kernel gets no split copy."""

from grader.cuda import coroutines, split_copies
from grader.cuda.coroutine_copies import Copies
from grader.cuda.rewrite import rewrite


def transformed(source, name="k.cu"):
    return coroutines.transform(rewrite(source, name), name)


def why_not_split(body):
    """Why `__global__ void k(float* p) { body }` gets no split copy (None: it gets one)."""
    import clang.cindex as ci
    source = f"__global__ void k(float* p) {{\n    {body}\n}}\n"
    text = rewrite(source, "k.cu")
    tu = coroutines.parse(text, "k.cu")
    functions = coroutines._functions(tu, coroutines.PARSED + "k.cu", ci.CursorKind)
    kernel = next(f for f in functions if f.kernel)
    return split_copies.why_not(Copies(text, "k.cu", set()), kernel, set()), transformed(source).split


def built(tmp_path, monkeypatch, source, way, order):
    """source built and loaded, its kernels to run on `way` (None: as graded, split where they can be) in `order`."""
    import ctypes
    from grader.cuda import build as cuda_build
    if way is None:
        monkeypatch.delenv("CUDA_CPU_THREADS", raising=False)
    else:
        monkeypatch.setenv("CUDA_CPU_THREADS", way)
    monkeypatch.setenv("CUDA_CPU_ORDER", order)
    path = tmp_path / "split.cu"
    path.write_text(source)
    lib = ctypes.CDLL(str(cuda_build.build(path)))
    lib.cuda_cpu_launch_error.restype = lib.cuda_cpu_threads.restype = lib.cuda_cpu_warnings.restype = ctypes.c_char_p
    lib.cuda_cpu_begin_call()
    return lib
