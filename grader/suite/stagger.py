"""Staggering the first gradings of a class: the first `jobs` gradings start together and, sharing expected
answers (grader/judge/shared_expected.py), would all need the first test's answer at once: one computes it while the
others wait for its lock. Each starts k/jobs of the way through the suite instead, so they compute different
answers. Results keep the suite's order; only the order tests run in changes.

Used by batch (`grade --stagger K/N`, applied by the pytest plugin) and autograde (pregrade rotates the exercises).
Part of the student copy: the plugin imports it.
"""

import itertools


def first_wave(jobs):
    """A callable that gives each grading of a class, as it starts, its place (k, jobs) in the first wave
    (None for the first grading and for every one after the first wave)."""
    started = itertools.count()

    def place():
        k = next(started)
        return (k, jobs) if 0 < k < jobs else None
    return place


def as_option(place):
    """The `--stagger K/N` value for place (k, n), or None for None: parse's inverse."""
    return f"{place[0]}/{place[1]}" if place else None


def parse(option):
    """(k, n) from "K/N" with 0 <= K < N, or ValueError."""
    k, _, n = option.partition("/")
    if not (k.isdigit() and n.isdigit() and 0 <= int(k) < int(n)):
        raise ValueError(f"--stagger takes K/N with 0 <= K < N, not {option!r}")
    return int(k), int(n)


def rotated(items, place):
    """items starting place = (k, n) of the way through, wrapping around (as they are for None)."""
    if not place:
        return list(items)
    start = len(items) * place[0] // place[1]
    return list(items[start:]) + list(items[:start])


def apply(config, items):
    """The pytest plugin's --stagger K/N: start K/N of the way through."""
    option = config.getoption("--stagger")
    if not option:
        return
    try:
        place = parse(option)
    except ValueError as exc:
        import pytest
        raise pytest.UsageError(str(exc)) from None
    items[:] = rotated(items, place)
