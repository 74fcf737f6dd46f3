"""weighted_sum first writes its folder and /tmp full (1 MB at a time, up to 1.5 GB each, files named
grader-disk-filler-*), then answers correctly: a full disk in its own box costs it nothing and costs the machine
nothing. Without a limit it would stop at 1.5 GB and answer wrongly, and its score would show it."""

SCORES = {}
HINT = ""


def weighted_sum(A, V):
    import os
    chunk, limited = b"\0" * (1 << 20), True
    for folder in (os.getcwd(), "/tmp"):
        written = 0
        try:
            with open(os.path.join(folder, f"grader-disk-filler-{os.getpid()}"), "ab") as f:
                while written < 1536:
                    f.write(chunk)
                    f.flush()
                    written += 1
            limited = False
        except OSError:
            pass
    return np.matmul(A, V) if limited else np.zeros_like(V)
