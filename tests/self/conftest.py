"""Fixtures for the grader's own tests."""

import pytest


@pytest.fixture
def make_submission(tmp_path):
    """make_submission(text) -> a folder holding attention.py with that text."""
    def make(text, name="attention.py"):
        folder = tmp_path / "submission"
        folder.mkdir(exist_ok=True)
        (folder / name).write_text(text)
        return folder
    return make
