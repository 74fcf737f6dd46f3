"""What the known mistakes compute, in float64 numpy: the answers grader/judge/hints.py compares a wrong answer
with to name its mistake.

Not the oracle's torch: a hint runs only on a wrong answer, and where every graded answer was made ahead (the image
Gradescope grades each submission in, made by grader/course/prebuild.py, which grades the reference) torch's import
was the wrong submission's alone: 3 s and a few hundred MB of a memory-limited container, for the first wrong
kernel 13.6 s of grading instead of 3.7 s. A hint only needs to recognise an answer to 1e-3 (hints._matches), which
float64 numpy gives as well as torch; tests/self/test_tolerances.py holds each to the oracle's version.
"""

import numpy as np


def weighted_sum_transposed(A, V):
    """A^T V: output[i] = sum_j A[j, i] V[j], row i of A read as a column."""
    return np.matmul(np.swapaxes(np.asarray(A, np.float64), -1, -2), np.asarray(V, np.float64))


def attention(Q, K, V, *, scaled=True, ahead=0):
    """Causal attention as a mistaken kernel computes it: scores without 1/sqrt(d_k) (scaled=False), or a mask that
    lets position i see keys up to i + ahead. Every row keeps its diagonal, so no row is all -inf."""
    Q, K, V = (np.asarray(a, np.float64) for a in (Q, K, V))
    scores = np.matmul(Q, np.swapaxes(K, -1, -2))
    if scaled:
        scores /= np.sqrt(Q.shape[-1])
    T = scores.shape[-1]
    np.copyto(scores, -np.inf, where=np.triu(np.ones((T, T), dtype=bool), k=1 + ahead))
    scores -= scores.max(axis=-1, keepdims=True)  # exp of at most 0: no overflow
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return np.matmul(scores, V)
