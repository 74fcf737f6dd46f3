"""The answers of known mistakes, which a wrong answer's hints (grader/judge/hints.py) compare it with: a weighted
sum of A^T, a kernel without the 1/sqrt(d_k) scale, a kernel whose mask lets i see i + 1.

They depend on the inputs alone, so, like the expected answers, each is computed once per machine and kept in the
answer cache (memo.get_for_inputs). `python -m grader prebuild` makes them ahead, while it grades the reference
(memo.prepare(): the checks call prepare() below): a wrong submission graded from that cache, as every one on
Gradescope is (a fresh container from the image prebuild filled), then imports no torch either. The oracle
computes them (torch): a numpy attention in the grader would hand every student the four exercises' answers, and
the release's leak scan refuses one.
"""

import numpy as np

from grader.judge import memo, oracle

# the kernel's known mistakes (hints.MISTAKES's ids): the name of the answer in the cache, and attention()'s words
KERNEL = {"kernel_no_scale": ("kernel without 1/sqrt(d_k)", {"scaled": False}),
          "kernel_mask_off_by_one": ("kernel mask off by one", {"ahead": 1})}


def attention(Q, K, V, ahead=0, scaled=True):
    """The oracle's attention with a known mistake: scores without 1/sqrt(d_k), or a mask that lets position i see
    keys up to i + ahead."""
    if not scaled:
        Q = np.asarray(Q, np.float64) * np.sqrt(Q.shape[-1])
    return oracle.attention_seeing_ahead(Q, K, V, ahead)


def first_head(Q, K, V, mistake):
    """A kernel mistake's answer for the first head alone: most wrong kernels are told from a mistake by it."""
    name, words = KERNEL[mistake]
    return memo.get_for_inputs(f"{name}, first head", (Q, K, V), lambda: attention(
        *(a.reshape((-1,) + a.shape[-2:])[:1] for a in (Q, K, V)), **words)[0])


def whole(Q, K, V, mistake):
    """A kernel mistake's whole answer."""
    name, words = KERNEL[mistake]
    return memo.get_for_inputs(name, (Q, K, V), lambda: attention(Q, K, V, **words))


def weighted_sum_transposed(A, V):
    return memo.get_for_inputs("weighted_sum with A transposed", (A, V),
                               lambda: oracle.weighted_sum(np.swapaxes(A, -1, -2), V))


def prepare(func, arrays):
    """While memo.preparing() (prebuild, grading the reference): make now the known mistakes' answers that func's
    hints would compare a wrong answer on these inputs with."""
    if not memo.preparing():
        return
    if func == "weighted_sum":
        weighted_sum_transposed(*arrays)
    elif func == "cuda_kernel":
        for mistake in KERNEL:
            first_head(*arrays, mistake)
            whole(*arrays, mistake)
