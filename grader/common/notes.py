"""Notes: what a test wants the student to read even when it passes (a runtime warning, nvcc's register count).

Checks call add(); the plugin hands each test's notes to its report; the scorecard prints each distinct note once
per exercise and results.json carries them in the test's output.
"""

_current = []


def add(exercise, text):
    text = text.strip()
    if text and (exercise, text) not in _current:
        _current.append((exercise, text))


def take():
    """The notes added since the last take() (the plugin calls it once per test)."""
    out = list(_current)
    _current.clear()
    return out
