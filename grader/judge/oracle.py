"""An independent float64 oracle, written with torch rather than NumPy.

The graded tests compare the student's arrays with these, never with the
reference solution's NumPy code, so the public suite ships no solution. Each
function takes NumPy arrays of any float dtype and returns float64 NumPy arrays.

torch is imported on first use, not with this module: a warm grading finds every answer in the machine's cache
(grader/judge/shared_expected.py) and never pays torch's 3 s import.
"""

import math

import numpy as np


def _torch():
    import torch
    return torch


def ready():
    """Import torch now (memo.get times the oracle, not torch's import)."""
    _torch()


def _t(a):
    return _torch().from_numpy(np.asarray(a, dtype=np.float64))


def scale_scores(Q, K):
    return _torch().matmul(_t(Q), _t(K).transpose(-1, -2)).div_(math.sqrt(Q.shape[-1])).numpy()


def future_mask(T):
    """True where j > i: the entries a causal mask hides."""
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def apply_causal_mask(scores):
    s = _t(scores)
    T = s.shape[-1]
    torch = _torch()
    hide = torch.ones(T, T, dtype=torch.bool).triu(1)
    return s.masked_fill(hide, float("-inf")).numpy()  # masked_fill copies: the input stays as it was


def row_softmax(scores):
    return _torch().softmax(_t(scores), dim=-1).numpy()


def weighted_sum(A, V):
    return _torch().matmul(_t(A), _t(V)).numpy()


def causal_attention(Q, K, V):
    """torch's own fused attention with is_causal=True: independent of every step above."""
    torch = _torch()
    with torch.no_grad():
        out = torch.nn.functional.scaled_dot_product_attention(_t(Q), _t(K), _t(V), is_causal=True)
    return out.numpy()


def attention_seeing_ahead(Q, K, V, ahead):
    """Attention whose mask lets position i see up to i + ahead: what an off-by-`ahead` mask computes."""
    torch = _torch()
    T = Q.shape[-2]
    allowed = ~torch.ones(T, T, dtype=torch.bool).triu(1 + ahead)
    with torch.no_grad():
        out = torch.nn.functional.scaled_dot_product_attention(_t(Q), _t(K), _t(V), attn_mask=allowed)
    return out.numpy()
