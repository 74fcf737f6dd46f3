"""scale_scores calls sys.exit(0), hoping the grader stops and reports success."""

SCORES = {"scale_scores": 0, "causal_attention": 0}
HINT = "raised SystemExit"


def scale_scores(Q, K):
    import sys
    sys.exit(0)
