"""compute_dk returns d_model // n_head but never raises ValueError."""

SCORES = {"compute_dk": 8}
HINT = "expected a ValueError"


def compute_dk(d_model, n_head):
    return d_model // n_head
