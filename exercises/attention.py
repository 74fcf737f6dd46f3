# Generated from solutions/attention.py by `make exercises`: fill in every `# YOUR CODE HERE`.
"""Causal self-attention, one step at a time, at the shapes of ANDREA-120M.

ANDREA-120M: d_model = 768, n_head = 12, context T = 1024, so each head works with
d_k = 768 / 12 = 64. For one head:

    Q = x W_Q,  K = x W_K,  V = x W_V                 each (T, d_k)
    scores        = Q K^T                             (T, T)
    scaled_scores = scores / sqrt(d_k)                divide by 8 here
    masked        = scaled_scores with j > i -> -inf  no peeking at the future
    A             = softmax over each row             each row sums to 1
    output        = A V                               (T, d_k)

The 12 heads' outputs are concatenated to (1024, 768) before W_O.

Every array function takes arrays with any number of leading batch dimensions
(for example (12, 1024, 64) for 12 heads), returns a new array of the same dtype
as its input (float32 in, float32 out; float64 in, float64 out) and never modifies
its inputs. Use NumPy; the grader calls these functions with numpy.ndarray inputs.
"""

import numpy as np


def compute_dk(d_model, n_head):
    """Return the width of one attention head, d_k = d_model // n_head, as a Python int.

    ANDREA-120M: compute_dk(768, 12) == 64.
    Raise ValueError with a clear message when d_model or n_head is not a positive
    int, or when n_head does not divide d_model.
    """
    # YOUR CODE HERE
    raise NotImplementedError()


def scale_scores(Q, K):
    """Return the scaled attention scores Q K^T / sqrt(d_k), shape (..., T, T).

    Q, K: shape (..., T, d_k), with d_k = Q.shape[-1] (64 for ANDREA-120M, so the
    scale is 1/8). Dividing by sqrt(d_k) keeps the scores' spread near 1, so the
    softmax does not saturate into its flat, gradient-starved region
    (Vaswani et al. 2017). Leading batch dimensions are kept: transpose only the
    last two axes of K.
    """
    # YOUR CODE HERE
    raise NotImplementedError()


def apply_causal_mask(scores):
    """Return a copy of scores, shape (..., T, T), with every entry j > i set to -inf.

    Row i is the query at position i; it may attend to positions 0..i only. Entries
    on and below the diagonal are returned unchanged. (The lesson's pseudo-code
    writes -1e9, "effectively -inf"; the grader accepts any value <= -1e9.)
    """
    # YOUR CODE HERE
    raise NotImplementedError()


def row_softmax(scores):
    """Return the softmax of each row (the last axis) of scores.

    Numerically stable: subtract each row's maximum before exp, so logits of
    magnitude 1e4 neither overflow nor give NaN. An entry of -inf becomes exactly 0,
    and every row sums to 1.
    """
    # YOUR CODE HERE
    raise NotImplementedError()


def weighted_sum(A, V):
    """Return A V: output[i] = sum_j A[i, j] V[j].

    A: attention weights, shape (..., T, T); V: values, shape (..., T, d_k).
    Returns shape (..., T, d_k).
    """
    # YOUR CODE HERE
    raise NotImplementedError()


def causal_attention(Q, K, V):
    """One head (or a batch of heads) of causal self-attention: the four steps above, chained.

    This one is complete: it works as soon as the four functions it calls do.
    """
    scores = scale_scores(Q, K)
    masked = apply_causal_mask(scores)
    A = row_softmax(masked)
    return weighted_sum(A, V)
