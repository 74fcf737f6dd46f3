"""scale_scores returns zeros of the right shape and dtype without computing anything."""

# it never reads (nor changes) Q and K, but the input-unchanged test asks for the right answer too: 0 everywhere
SCORES = {"scale_scores": 0, "causal_attention": 0}
HINT = "earned only with the right answer too"


def scale_scores(Q, K):
    return np.zeros(Q.shape[:-1] + (K.shape[-2],), dtype=Q.dtype)
