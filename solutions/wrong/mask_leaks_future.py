"""apply_causal_mask is off by one: it masks j > i + 1, so each position sees the next one."""

# keeps T = 1 (no future to leak); the input-unchanged test needs the right answer too
SCORES = {"apply_causal_mask": 1, "causal_attention": 0}
HINT = "the mask leaks the future"
MISTAKE = "mask_leaks_future"


def apply_causal_mask(scores):
    T = scores.shape[-1]
    future = np.triu(np.ones((T, T), dtype=bool), k=2)
    return np.where(future, np.asarray(-np.inf, dtype=scores.dtype), scores)
