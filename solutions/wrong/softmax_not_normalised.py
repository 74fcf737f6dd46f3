"""row_softmax returns exp(x - max) without dividing by the row sum."""

# keeps T = 1, the input-unchanged test and the T = 17 large-logit tests (1 + 2 pts): saturated rows hold exp(0) = 1 and exact zeros, so they sum to 1 anyway
SCORES = {"row_softmax": 5, "causal_attention": 0}
HINT = "rows do not sum to 1"


def row_softmax(scores):
    return np.exp(scores - np.max(scores, axis=-1, keepdims=True))
