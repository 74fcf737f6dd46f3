"""row_softmax allocates until memory runs out; the worker's limit stops it, not the machine's."""

SCORES = {"row_softmax": 0, "causal_attention": 0}
HINT = "memory limit"


def row_softmax(scores):
    hoard = []
    while True:  # 1 GiB at a time, every page written
        hoard.append(np.ones(1 << 27))
