"""scale_scores forks until the system refuses (each child sleeps 600.321 s). The box's process limit stops it:
the call raises, costing scale_scores only, and no child outlives grading. Without a limit it would stop at 300
children and answer correctly, and its score would show it."""

SCORES = {"scale_scores": 0, "causal_attention": 0}
HINT = "BlockingIOError"


def scale_scores(Q, K):
    import os
    for _ in range(300):
        if os.fork() == 0:
            try:
                os.execv("/bin/sleep", ["sleep", "600.321"])
            finally:
                os._exit(0)
    return np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1]).astype(Q.dtype)
