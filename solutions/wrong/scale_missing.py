"""scale_scores forgets to divide by sqrt(d_k): scores 8 times too large."""

# keeps nothing: the input-unchanged test needs the right answer too
SCORES = {"scale_scores": 0, "causal_attention": 0}
HINT = "missing scale"
MISTAKE = "missing_scale"


def scale_scores(Q, K):
    return np.matmul(Q, np.swapaxes(K, -1, -2))
