"""compute_dk starts a background process in a new session that would outlive grading (it is killed)."""

SCORES = {}
HINT = ""


def compute_dk(d_model, n_head):
    import os
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sleep", ["sleep", "600.123"])
        os._exit(0)
    for value in (d_model, n_head):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
            raise ValueError("d_model and n_head must be positive ints")
    if d_model % n_head != 0:
        raise ValueError("n_head must divide d_model")
    return int(d_model // n_head)
