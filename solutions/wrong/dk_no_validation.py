"""compute_dk returns d_model // n_head but never raises ValueError."""

# keeps the 8 points of the 1 + 6 + 1 valid-model tests; loses the 3 tests that expect ValueError
SCORES = {"compute_dk": 8}
HINT = "expected a ValueError"


def compute_dk(d_model, n_head):
    return d_model // n_head
