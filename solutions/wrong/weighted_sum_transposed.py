"""weighted_sum computes A^T V: each output mixes a column of A instead of a row."""

# keeps T = 1; the input-unchanged test needs the right answer too
SCORES = {"weighted_sum": 1, "causal_attention": 0}
HINT = "your result is A^T V"
MISTAKE = "weights_transposed"


def weighted_sum(A, V):
    return np.matmul(np.swapaxes(A, -1, -2), V)
