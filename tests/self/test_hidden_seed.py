"""The hidden suite's seed: 128 random bits made on the instructor's machine, never in the repository."""

import re
import stat
import subprocess
import sys
import time

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


_MAKE_AT_ONCE = """
import sys, time
from pathlib import Path
from grader.judge import hidden_seed
hidden_seed.SEED_FILE = Path(sys.argv[1])
start = float(sys.argv[2])
while time.time() < start:
    pass
print(hidden_seed.seed())
"""


def test_gradings_that_make_the_seed_at_the_same_moment_all_read_one_whole_seed(tmp_path, monkeypatch):
    # Two gradings (the public and hidden halves, a class's students) may start on a machine without a seed at
    # the same moment. Each must read one whole seed, the same one: never an empty file half made by another.
    monkeypatch.delenv("GRADER_HIDDEN_SEED", raising=False)
    for attempt in range(5):
        seed_file = tmp_path / str(attempt) / "hidden_seed.txt"
        start = time.time() + 1.0  # every process is started by then, and spins until it
        procs = [subprocess.Popen([sys.executable, "-c", _MAKE_AT_ONCE, str(seed_file), str(start)], cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(8)]
        results = [proc.communicate(timeout=60) for proc in procs]
        assert all(proc.returncode == 0 for proc in procs), [err for _, err in results if err]
        assert len({out.strip() for out, _ in results}) == 1
        assert sorted(p.name for p in seed_file.parent.iterdir()) == ["hidden_seed.txt"]  # no draft left behind
