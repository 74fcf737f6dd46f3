"""The hidden suite's seed: 128 random bits made on the instructor's machine, never in the repository."""

import re
import stat
import subprocess

from grader.judge import hidden_seed
from helpers import ROOT


def test_a_missing_seed_is_made_with_128_random_bits_for_its_owner_only(tmp_path, monkeypatch):
    monkeypatch.delenv("GRADER_HIDDEN_SEED", raising=False)
    monkeypatch.setattr(hidden_seed, "SEED_FILE", tmp_path / "hidden" / "hidden_seed.txt")
    first = hidden_seed.seed()
    assert hidden_seed.SEED_FILE.is_file() and stat.S_IMODE(hidden_seed.SEED_FILE.stat().st_mode) == 0o600
    assert 0 <= first < 2 ** 128 and first.bit_length() > 64  # 2^-64: a fresh 128-bit draw is never this small
    assert hidden_seed.seed() == first  # kept: the same inputs on every later grading
    monkeypatch.setattr(hidden_seed, "SEED_FILE", tmp_path / "other" / "hidden_seed.txt")
    assert hidden_seed.seed() != first  # another instructor's machine draws its own
    monkeypatch.setenv("GRADER_HIDDEN_SEED", "12345")
    assert hidden_seed.seed() == 12345


def test_the_repository_holds_no_seed():
    assert subprocess.run(["git", "check-ignore", "-q", str(hidden_seed.SEED_FILE)], cwd=ROOT).returncode == 0
    conftest = (ROOT / "tests" / "hidden" / "conftest.py").read_text()
    assert not re.search(r"\d{6,}", conftest)
