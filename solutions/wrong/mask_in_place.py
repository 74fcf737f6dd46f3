"""apply_causal_mask writes -inf into the caller's array instead of a copy."""

# every value is right; only the input-unchanged test fails
SCORES = {"apply_causal_mask": 13}
HINT = "modified its input"


def apply_causal_mask(scores):
    T = scores.shape[-1]
    scores[..., np.triu(np.ones((T, T), dtype=bool), k=1)] = -np.inf
    return scores
