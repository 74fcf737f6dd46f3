"""row_softmax returns exp(x - max) without dividing by the row sum."""

# keeps T = 1 and the public T = 17 large-logit test (1 pt each): saturated rows hold
# exp(0) = 1 and exact zeros, so they sum to 1 anyway; the hidden large-logit tests repeat a row's maximum (sum 2)
SCORES = {"row_softmax": 2, "causal_attention": 0}
HINT = "rows do not sum to 1"
MISTAKE = "rows_not_normalised"


def row_softmax(scores):
    return np.exp(scores - np.max(scores, axis=-1, keepdims=True))
