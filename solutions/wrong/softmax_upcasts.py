"""row_softmax computes in float64 and returns float64 for float32 input."""

SCORES = {"row_softmax": 11, "causal_attention": 4}
HINT = "the output dtype must equal the input dtype"


def row_softmax(scores):
    s = scores.astype(np.float64)
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)
