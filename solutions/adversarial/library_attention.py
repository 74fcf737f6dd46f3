"""Uses torch's softmax in row_softmax (through an alias and a helper) and torch's fused attention in
causal_attention: forbidden calls, found in the source and named with their lines (grader/judge/forbidden.py)."""

SCORES = {"row_softmax": 0, "causal_attention": 0}
HINT = "may not use a library version"


def _rows(x):
    import torch.nn.functional as F
    import torch
    return F.softmax(torch.from_numpy(x), dim=-1).numpy()


def row_softmax(scores):
    return _rows(scores)


def causal_attention(Q, K, V):
    import torch
    q, k, v = (torch.from_numpy(a) for a in (Q, K, V))
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).numpy()
