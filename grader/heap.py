"""glibc heap settings for graders and workers that allocate and free arrays of 100 MB (ANDREA-120M, batch 2).

By default glibc maps every allocation over 32 MB afresh and unmaps it when freed, so each test's big arrays are
page-faulted in and zeroed by the kernel again: measured, a third of a grading's CPU time was system time. With
the thresholds raised, freed arrays stay in the heap and are reused; torch also asks for huge pages. Measured on a
2-core machine (`python -m grader grade --submission solutions`, one thread): system time 8.0 s -> 5.0 s, wall
18.7 s -> 16.5 s. glibc reads these at process start, so they travel in the environment (grader/__main__.py
re-executes itself once with them; workers and batch gradings inherit them).
"""

import os

SETTINGS = {"MALLOC_MMAP_THRESHOLD_": str(1 << 32), "MALLOC_TRIM_THRESHOLD_": str(1 << 34),
            "THP_MEM_ALLOC_ENABLE": "1"}


def missing():
    return [key for key in SETTINGS if key not in os.environ]


def environment(base=None):
    """base (default: os.environ) with the heap settings added where not already set."""
    env = dict(os.environ if base is None else base)
    for key, value in SETTINGS.items():
        env.setdefault(key, value)
    return env
