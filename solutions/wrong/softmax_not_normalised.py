"""row_softmax returns exp(x - max) without dividing by the row sum."""

SCORES = {"row_softmax": 2, "causal_attention": 0}
HINT = "rows do not sum to 1"


def row_softmax(scores):
    return np.exp(scores - np.max(scores, axis=-1, keepdims=True))
