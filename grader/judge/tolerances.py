"""How far a correct answer may be from the float64 oracle, per dtype. Written down once, here.

Every bound is a worst-case rounding bound for *any* correct algorithm (any summation
order, FMA or not), times SAFETY, so a correct float32 answer never fails and a
real mistake (a factor of 8, a leaked row, a wrong axis) is always far outside.
u is the unit roundoff of the answer's dtype: 2**-24 ~ 6.0e-8 for float32, 2**-53 ~ 1.1e-16
for float64. gamma(n) = n u / (1 - n u) (Higham, Accuracy and Stability of Numerical
Algorithms, 2nd ed., section 3.1).

- matmul of n terms: |C - fl(C)| <= gamma(n) |A| |B| (Higham Thm 3.5; any order).
  Scaling by 1/sqrt(d_k) before or after adds two roundings: gamma(n + 2).
- softmax p_j = exp(x_j - m) / sum: the subtraction errs by u |x_j - m|, which exp turns
  into a relative error of |x_j - m| u; exp itself errs by at most EXP_ULPS ulps; the sum
  of n positive terms by gamma(n); the division by u. Relative bound:
  (|x_j| + |m| + EXP_ULPS + n + 1) u, plus TINY absolute for results that underflow; where x_j is -inf,
  none: a masked position must come out exactly 0.
- The causal mask is exact: kept entries must equal the input bit for bit.
- Chained attention: a score error e_ij changes a weight by at most a factor exp(2 max_j e_ij),
  then A V adds gamma(T); bound (2 max_j e_ij + softmax bound + gamma(T)) (|A| |V|).
"""

import numpy as np

SAFETY = 2.0
EXP_ULPS = 4  # glibc/NumPy exp are within 1-4 ulp
MASK_LIMIT = -1e9  # the lesson's "effectively -inf": any value at or below it counts as masked
MASK_ROWS = 64  # rows of every head a mask check reads at a time: each block's temporaries stay in the cache


def unit_roundoff(dtype):
    return float(np.finfo(dtype).eps) / 2


def tiny(dtype):
    """Absolute slack for results that underflow: the smallest normal number of the dtype."""
    return float(np.finfo(dtype).tiny)


def gamma(n, dtype):
    nu = n * unit_roundoff(dtype)
    return nu / (1 - nu)


def bound_dtype(dtype):
    """The dtype a bound is kept in: float32 for float32 answers (half the memory of float64: a bound only sizes
    the slack, and its own rounding, ~6e-8 relative, is far inside SAFETY); float64 for float64 answers, whose
    smallest bounds (tiny(float64)) float32 cannot hold."""
    return np.float32 if np.dtype(dtype) == np.float32 else np.float64


def matmul_bound(A, B, n_terms, dtype, extra_roundings=0):
    """Per-element bound for A @ B computed in dtype: SAFETY gamma(n + extra) |A| |B| (+ tiny)."""
    # |A| |B| in float32: it only sizes the bound, and its own relative error (~1e-5) is far inside SAFETY
    bound = np.matmul(np.abs(A, dtype=np.float32), np.abs(B, dtype=np.float32)).astype(bound_dtype(dtype), copy=False)
    bound *= SAFETY * gamma(n_terms + extra_roundings, dtype)
    bound += tiny(dtype)
    return bound


def scale_scores_bound(Q, K, dtype):
    d_k = Q.shape[-1]
    bound = matmul_bound(Q, np.swapaxes(K, -1, -2), d_k, dtype, extra_roundings=2)
    bound /= np.sqrt(d_k)
    return bound


def softmax_relative(scores, dtype):
    """Per-element relative bound of a correct softmax of scores (may hold -inf), in bound_dtype(dtype)."""
    rel = np.abs(np.asarray(scores, bound_dtype(dtype)))  # a fresh array, updated in place below
    np.copyto(rel, 0.0, where=~np.isfinite(rel))
    rel += np.max(rel, axis=-1, keepdims=True)  # |x_j| + |m|
    rel += EXP_ULPS + rel.shape[-1] + 1
    rel *= SAFETY * unit_roundoff(dtype)
    return rel


def softmax_bound(scores, expected, dtype):
    bound = softmax_relative(scores, dtype)
    bound *= expected  # then |.|: no full-size |expected| temporary
    np.abs(bound, out=bound)
    bound += tiny(dtype)
    np.copyto(bound, 0.0, where=scores == -np.inf)  # exactly 0 there: the one comparison checks it too
    return bound


def weighted_sum_bound(A, V, dtype):
    return matmul_bound(A, V, A.shape[-1], dtype)


def attention_bound(Q, K, V, dtype):
    """Bound for a chained causal attention output (see the module docstring).

    The magnitudes that size it (|Q| |K|^T, the scores, the weights A and |A| |V|) are computed in float32 with
    torch: their own relative error, ~1e-5, is far inside SAFETY, and they cost half of float64.
    """
    import torch  # the oracle's library; float32 and multithreaded here
    T, d_k = Q.shape[-2], Q.shape[-1]
    q, k, v = (torch.from_numpy(np.asarray(a, dtype=np.float32)) for a in (Q, K, V))
    hide = torch.ones(T, T, dtype=torch.bool).triu(1)
    absprod = torch.matmul(q.abs(), k.abs().transpose(-1, -2)).masked_fill_(hide, 0.0)
    row_err = absprod.amax(dim=-1, keepdim=True).double().numpy()
    del absprod
    row_err *= SAFETY * gamma(d_k + 2, dtype) / np.sqrt(d_k)  # scale_scores_bound's row maximum
    scores = torch.matmul(q, k.transpose(-1, -2)).div_(float(np.sqrt(d_k))).masked_fill_(hide, float("-inf"))
    row_max = scores.abs().masked_fill_(hide, 0.0).amax(dim=-1, keepdim=True).double().numpy()
    soft = SAFETY * (2 * row_max + EXP_ULPS + T + 1) * unit_roundoff(dtype)  # softmax_relative's row maximum
    rel = SAFETY * 2 * row_err + soft + SAFETY * gamma(T, dtype)
    bound = torch.matmul(torch.softmax(scores, dim=-1), v.abs()).numpy().astype(bound_dtype(dtype), copy=False)
    bound *= rel
    bound += tiny(dtype)
    return bound
