"""Limits every front end shares, once."""

# seconds one call into the student's code may take unless a grading says otherwise (--timeout): generous for a
# NumPy loop over 12 x 1024 rows; a kernel's runs have limits of their own (grader/cuda/time_limits.py)
CALL_TIMEOUT = 60.0
