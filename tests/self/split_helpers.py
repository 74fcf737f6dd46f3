"""What the split-copy tests share (test_cuda_split.py, test_cuda_warp_split.py): a source's transformation, and why
its one kernel gets no split copy."""

from grader.cuda import coroutines, split_copies
from grader.cuda.coroutine_copies import Copies
from grader.cuda.rewrite import rewrite


def transformed(source, name="k.cu"):
    return coroutines.transform(rewrite(source, name), name)


def why_not_split_each(bodies):
    """{case: (why `__global__ void k(float* p) { body }` gets no split copy (None: it gets one), whether it got
    one)} for bodies {case: body}, every case a kernel of one file (one parse, one transformation)."""
    import clang.cindex as ci
    cases = sorted(bodies)
    source = "".join(f"__global__ void k{i}(float* p) {{\n    {bodies[case]}\n}}\n" for i, case in enumerate(cases))
    text = rewrite(source, "k.cu")
    tu = coroutines.parse(text, "k.cu")
    kernels = {f.cursor.spelling: f for f in coroutines._functions(tu, coroutines.PARSED + "k.cu", ci.CursorKind)
               if f.kernel}
    split = coroutines.transform(text, "k.cu").split
    return {case: (split_copies.why_not(Copies(text, "k.cu", set()), kernels[f"k{i}"], set()), f"k{i}" in split)
            for i, case in enumerate(cases)}


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
