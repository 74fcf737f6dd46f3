"""scale_scores divides by d_k instead of sqrt(d_k)."""

# keeps nothing: the input-unchanged test needs the right answer too
SCORES = {"scale_scores": 0, "causal_attention": 0}
HINT = "divided by d_k instead of sqrt(d_k)"
MISTAKE = "scaled_by_d_k"


def scale_scores(Q, K):
    return np.matmul(Q, np.swapaxes(K, -1, -2)) / np.asarray(Q.shape[-1], dtype=Q.dtype)
