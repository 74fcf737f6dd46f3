"""weighted_sum calls os._exit(0): the worker process ends at once, with status 0."""

SCORES = {"weighted_sum": 0, "causal_attention": 0}
HINT = "do not call sys.exit(), os._exit()"


def weighted_sum(A, V):
    import os
    os._exit(0)
