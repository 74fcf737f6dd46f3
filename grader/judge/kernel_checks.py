"""The CUDA kernel's check: run on the CPU runtime with all its checks (every machine, one grade), compared with
torch's fused attention in float64; where a GPU is present, the same run there too, timed and compared, never
graded. Its time limits: grader/cuda/time_limits.py, through the kernel under test (grader/suite/kernel_under_test.py)."""

import numpy as np

from grader.common.i18n import _
from grader.common import environment, records
from grader.common.failures import StudentCodeError, TimedOut
from grader.common.records import timed
from grader.judge import hints, memo, mistaken_answers, oracle
from grader.judge import tolerances as tol
from grader.judge.checks import PICTURE_T, _Call, _pictured  # the Python checks' call and picture, shared
from grader.judge.compare import assert_close, expect_array, wrong_elements


GPU_TIMED_RUNS = 10


def sdpa_milliseconds(Q, K, V):
    """torch's fused causal attention on the GPU at this shape (None without a CUDA torch)."""
    import torch
    if not torch.cuda.is_available():
        return None
    q, k, v = (torch.from_numpy(a).cuda() for a in (Q, K, V))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    sdpa(q, k, v, is_causal=True)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _run in range(GPU_TIMED_RUNS):
        sdpa(q, k, v, is_causal=True)
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / GPU_TIMED_RUNS


def _gpu_timing_note(runner, Q, K, V):
    """On a GPU: the kernel's time, its bandwidth (Q, K, V read once, O written once) and torch's SDPA beside it."""
    ms = runner.device_ms
    if ms <= 0:
        return
    gbs = 4 * Q.nbytes / (ms * 1e-3) / 1e9
    text = _("kernel report: on the GPU too (not graded); at {shape} your kernel takes {ms} ms ({gbs} GB/s)").format(
        shape="x".join(map(str, Q.shape)), ms=f"{ms:.3f}", gbs=f"{gbs:.0f}")
    ref = sdpa_milliseconds(Q, K, V)
    if ref is not None:
        text += "; " + _("torch scaled_dot_product_attention {ms} ms (yours takes {times}x as long)").format(
            ms=f"{ref:.3f}", times=f"{ms / ref:.1f}")
    else:
        text += "; " + _("torch here has no CUDA, so scaled_dot_product_attention was not timed beside it")
    records.add_note("cuda_kernel", text)


def run_on_the_gpu_too(kernel, Q, K, V, expected, bound, limit):
    """Where a GPU is present: the same run on the device, timed, and compared with the oracle: notes, never
    points (the grade comes from the CPU runtime, with its guards, on every machine). Returns the device's worker,
    or None."""
    gpu, why_not = kernel.gpu()
    if gpu is None:
        if why_not:
            records.add_note("cuda_kernel", _("on the GPU too: not run (not graded): {why}").format(why=why_not))
        return None
    try:
        got = gpu.call("causal_attention_forward", Q, K, V, repeats=GPU_TIMED_RUNS, timeout=limit)
    except StudentCodeError as exc:
        records.add_note("cuda_kernel", _("on the GPU too (not graded): the run failed: {why}").format(why=exc))
        return None
    wrong = int(wrong_elements(got, expected, bound).sum()) if got.shape == expected.shape else got.size
    records.add_note("cuda_kernel", _("on the GPU too (not graded): the same answer, within the tolerance") if not wrong
                     else _("on the GPU too (not graded): {wrong} of {total} elements differ from the oracle there, "
                            "though not on the CPU runtime: a race or an out-of-bounds access the GPU does not stop?")
                     .format(wrong=wrong, total=expected.size))
    _gpu_timing_note(gpu, Q, K, V)
    return gpu


def kernel_expected(Q, K, V):
    """(expected O, bound) for the kernel on Q, K, V: torch's fused attention in float64, float32 tolerances."""
    return memo.get("cuda_kernel", (Q, K, V), lambda: (oracle.causal_attention(Q, K, V),
                                                       tol.attention_bound(Q, K, V, np.float32)))


def _forward_result(runner, Q, K, V, limit, words, order):
    """For a failed run in another thread order, the same input's result with the threads in their usual order (a
    race shows as the two differing), or None when that cannot be had: only a failure pays for the rerun."""
    if order == "forward":
        return None
    try:
        return _Call(runner, "causal_attention_forward", Q, K, V, order="forward", limit=(limit.seconds, words)).result()
    except Exception:
        return None


def check_kernel(kernel, Q, K, V, *, what, order="forward", timing=False):
    """The student's CUDA kernel, run on the CPU runtime with all its checks, against torch's fused attention in
    float64: the same grade on every machine.

    timing: note the CPU time beside the reference kernels'; where a GPU is present, also run it there (timed
    beside torch's scaled_dot_product_attention and compared with the oracle, not graded)."""
    runner = kernel.runner()
    kernel.check_not_timed_out(Q)
    limit = kernel.time_limit(Q)
    words = limit.words(Q.shape)
    if not limit.at_floor:  # a long run needs a worker whose CPU-time limit covers it on every core
        runner.keep_cpu_for(int(limit.seconds * environment.cores()) + 60)
    running = _Call(runner, "causal_attention_forward", Q, K, V, order=order, limit=(limit.seconds, words))
    with timed("compare"):
        expected, bound = kernel_expected(Q, K, V)
        mistaken_answers.prepare("cuda_kernel", (Q, K, V))  # prebuild: a wrong kernel's known mistakes too
    try:
        got, warnings = running.result(), runner.warnings
    except TimedOut as exc:
        kernel.record_timeout(Q, what, str(exc).split("\n" + _("your code printed:"))[0])
        raise
    if timing and got is not None:
        from grader.cuda import kernel_report
        records.add_note("cuda_kernel", kernel_report.cpu_note(kernel, runner.kernel_seconds, Q, K, V,
                                                               occupancy=runner.occupancy, threads=runner.threads))
    if warnings:
        records.add_note("cuda_kernel", warnings)
    with timed("compare"):
        expect_array(got, func="causal_attention_forward", shape=V.shape, dtype=np.float32)
        label = f"causal_attention_forward on {what}" + (f", threads run in {order} order" if order != "forward" else "")
        # the picture reads the weights back through V = identity: it needs d_k >= T
        with _pictured("cuda_kernel", "causal_attention_forward", Q, K, drawable=Q.shape[-1] >= PICTURE_T):
            assert_close(got, expected, bound, what=label,
                         hints=lambda: hints.kernel(got, expected, Q, K, V, order,
                                                    forward=_forward_result(runner, Q, K, V, limit, words, order)))
    if timing:
        _note_memory_traffic(kernel)
        run_on_the_gpu_too(kernel, Q, K, V, expected, bound, limit.seconds)
    return got


def _note_memory_traffic(kernel):
    """The kernel report's memory traffic (grader/cuda/profile.py), for a kernel that has just proved correct: a
    courtesy, never a reason to fail the test."""
    from grader.cuda import profile, traffic_report
    from grader.common.layout import REFERENCE_KERNEL
    if not profile.wanted():
        return
    try:
        from grader.cuda import gpus
        versions = traffic_report.measured_versions(kernel.source, REFERENCE_KERNEL)
        records.add_note("cuda_kernel", traffic_report.report(kernel.source, versions=versions))
        records.add_data("roofline", traffic_report.roofline_points(versions, gpus.chosen()))  # the picture's
    except Exception as exc:  # a profiled build or run that fails says so in one line
        records.add_note("cuda_kernel", _("(memory traffic not counted: {why})").format(
            why=str(exc).strip().splitlines()[0][:300]))
