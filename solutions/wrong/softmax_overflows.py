"""row_softmax skips the max subtraction: exp overflows at large logits and gives NaN."""

# loses the large-logit tests (1 + 1 public, 2 + 2 hidden) and the flat-rows test (1)
SCORES = {"row_softmax": 9}
HINT = "overflow at large logits"
MISTAKE = "softmax_overflow"


def row_softmax(scores):
    e = np.exp(scores)
    return e / np.sum(e, axis=-1, keepdims=True)
