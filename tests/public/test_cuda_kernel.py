"""The CUDA kernel (csrc/microgpt_cuda.cu): O = softmax(mask(Q K^T / sqrt(d_k))) V for every (T, d_k) slice.

Graded on the CPU runtime (csrc/cuda_cpu) on every machine: one fiber per CUDA thread, real barriers and warp
collectives, guards around every buffer. With an NVIDIA GPU and nvcc, the ANDREA-120M run also runs on the device
(csrc/cuda_gpu), timed beside torch's scaled_dot_product_attention and compared with the oracle, not graded. Each
shape category is worth its own point. Its inputs: tests/public/cases.toml [cuda_kernel].
"""

import numpy as np
import pytest

from grader.common.i18n import _
from grader.judge import cases, kernel_checks
from grader.judge import inputs
from grader.cuda import kernel_report
from grader.common import records
from grader.judge.compare import WrongAnswer
from grader.common.failures import BuildFailed, NotGradable, NotImplementedYet, StudentCodeError

pytestmark = [pytest.mark.exercise("cuda_kernel"), pytest.mark.points(1)]
F32 = np.float32



def test_matches_scaled_dot_product_attention(kernel, rng, case):
    Q, K, V = inputs.qkv(rng, case, F32)
    kernel_checks.check_kernel(kernel, Q, K, V, what=case.label, timing=case.T == 1024 and case.lead == (12,))


def test_large_logits_are_stable(kernel, rng, case):
    Q, K, V = inputs.qkv(rng, case, F32)
    kernel_checks.check_kernel(kernel, Q * F32(40), K * F32(40), V, what=case.label)


def test_same_result_whatever_order_threads_run_in(kernel, rng, case):
    Q, K, V = inputs.qkv(rng, case, F32)
    kernel_checks.check_kernel(kernel, Q, K, V, what=case.label, order="reverse")


def test_compiles_as_cuda(kernel):
    """nvcc catches what g++ cannot: host calls from device code, too much shared memory."""
    from grader.cuda import nvcc
    tiny = np.ones((1, 1, 64), F32)
    if kernel.timed_out is None:  # (a kernel that never ends is implemented; the check below still applies)
        try:  # a stub earns nothing here either; a kernel that runs, right or wrong, is checked by nvcc
            kernel.runner().call("causal_attention_forward", tiny, tiny, tiny,
                                 timeout=kernel.time_limit(tiny).seconds)
        except (NotImplementedYet, NotGradable):
            raise
        except StudentCodeError:
            if not kernel.source.is_file():  # nothing to compile
                raise
    ok, text = nvcc.nvcc_check(kernel.source)
    if ok is None:  # a failing 0, not a skip: the maximum stays the same on every machine (and in the notebook)
        raise NotGradable(_("could not run here: {why}. This point stays in the maximum, so the total is the same "
                            "everywhere; the course's grading runs the check").format(why=text))
    if not ok:
        raise BuildFailed(_("{file} does not compile with nvcc ({arch}):").format(file=kernel.source.name,
                                                                                    arch=nvcc.NVCC_ARCH) + f"\n{text}")
    records.add_note("cuda_kernel", _("nvcc {arch}, per kernel:").format(arch=nvcc.NVCC_ARCH) + "\n" + text)


if kernel_report.SPEED_POINTS:  # off by default: an instructor turns them on in grader/cuda/kernel_report.py
    @pytest.mark.points(kernel_report.SPEED_POINTS)
    def test_fast_on_a_gpu(kernel, rng):
        case = cases.shape("andrea", "cuda_kernel")
        Q, K, V = inputs.qkv(rng, case, F32)
        kernel_checks.check_kernel(kernel, Q, K, V, what=case.label)  # right first, on the CPU runtime
        if kernel.gpu()[0] is None:  # a failing 0, not a skip: the maximum is the same on every machine
            raise NotGradable(_("could not run here: speed points are awarded on a GPU only, and this machine has "
                                "none"))
        ref = kernel_checks.sdpa_milliseconds(Q, K, V)
        if ref is None:
            raise NotGradable(_("could not run here: torch here has no CUDA, so there is nothing to time the "
                                "kernel against"))
        expected, bound = kernel_checks.kernel_expected(Q, K, V)
        gpu = kernel_checks.run_on_the_gpu_too(kernel, Q, K, V, expected, bound, kernel.time_limit(Q).seconds)
        if gpu is None:
            raise NotGradable(_("could not run here: the kernel did not run on the GPU (its report says why)"))
        ms = gpu.device_ms
        if ms > kernel_report.SPEED_TARGET * ref:
            raise WrongAnswer(_("your kernel takes {ms} ms at the ANDREA-120M shape, more than {times}x torch's {ref} "
                                "ms").format(ms=f"{ms:.3f}", times=f"{kernel_report.SPEED_TARGET:g}", ref=f"{ref:.3f}"))
