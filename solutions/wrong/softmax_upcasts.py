"""row_softmax computes in float64 and returns float64 for float32 input."""

# loses every float32 test: row_softmax 4 + 1 public, the input-unchanged test (float32), 2 hidden; causal_attention 1 public (andrea float32), 2 hidden (batch of 2, float32)
SCORES = {"row_softmax": 8, "causal_attention": 3}
HINT = "the output dtype must equal the input dtype"


def row_softmax(scores):
    s = scores.astype(np.float64)
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)
