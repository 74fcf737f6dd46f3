"""row_softmax skips the max subtraction: exp overflows at large logits and gives NaN."""

SCORES = {"row_softmax": 12}
HINT = "overflow at large logits"


def row_softmax(scores):
    e = np.exp(scores)
    return e / np.sum(e, axis=-1, keepdims=True)
