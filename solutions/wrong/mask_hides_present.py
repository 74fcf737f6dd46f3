"""apply_causal_mask also masks the diagonal (j >= i): no position may attend to itself."""

# nothing kept: T = 1 masks its only entry, and the input-unchanged test needs the right answer too; rows of -inf
# break causal_attention
SCORES = {"apply_causal_mask": 0, "causal_attention": 0}
HINT = "the mask hides the present"
MISTAKE = "mask_hides_present"


def apply_causal_mask(scores):
    T = scores.shape[-1]
    future = np.triu(np.ones((T, T), dtype=bool), k=0)
    return np.where(future, np.asarray(-np.inf, dtype=scores.dtype), scores)
