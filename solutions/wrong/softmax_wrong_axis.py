"""row_softmax normalises over axis -2: the columns sum to 1 instead of the rows."""

# keeps T = 1; the input-unchanged test needs the right answer too
SCORES = {"row_softmax": 1, "causal_attention": 0}
HINT = "softmax over the wrong axis"
MISTAKE = "softmax_wrong_axis"


def row_softmax(scores):
    e = np.exp(scores - np.max(scores, axis=-2, keepdims=True))
    return e / np.sum(e, axis=-2, keepdims=True)
