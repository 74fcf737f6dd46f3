"""compute_dk uses / and returns a float (64.0), and checks nothing."""

# 64.0 is not a Python int: every compute_dk test fails
SCORES = {"compute_dk": 0}
HINT = "return a Python int"


def compute_dk(d_model, n_head):
    return d_model / n_head
