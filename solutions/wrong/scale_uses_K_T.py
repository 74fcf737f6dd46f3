"""scale_scores uses K.T, which reverses every axis: right for one 2-D head, wrong for batches of heads."""

# keeps the two 2-D cases (one head, T = 17 and T = 1023), where K.T is right
SCORES = {"scale_scores": 2, "causal_attention": 0}
HINT = "batch dims not handled"
MISTAKE = "batch_dims"


def scale_scores(Q, K):
    return (Q @ K.T) / np.asarray(np.sqrt(Q.shape[-1]), dtype=Q.dtype)
