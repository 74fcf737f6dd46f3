"""row_softmax never returns: one timeout, then its other tests and causal_attention, which calls it, fail at once;
the other exercises are untouched."""

SCORES = {"row_softmax": 0, "causal_attention": 0}
HINT = "already timed out"


def row_softmax(scores):
    while True:
        pass
