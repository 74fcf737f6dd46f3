"""Expected answers shared by the gradings of one class (grader/judge/shared_expected.py, through memo.get)."""

import os
import re
from pathlib import Path

import numpy as np
import pytest

from grader.judge import memo
from grader.judge import shared_expected


@pytest.fixture
def shared(tmp_path):
    shared_expected.use(tmp_path / "expected")
    yield tmp_path / "expected"
    shared_expected.use(None)


def _grading(key, Q, calls):
    """What one student's grading does in a test: memo.get of the expected answer and its bound."""
    memo.begin(key)
    return memo.get("scale_scores", (Q,), lambda: calls.append(1) or (Q * 2.0, np.float64(1e-6)))


def test_second_grading_reads_what_the_first_computed(shared):
    Q = np.random.default_rng(0).standard_normal((3, 5), dtype=np.float32)
    calls = []
    first = _grading("tests/public/test_x.py::test_a", Q, calls)
    memo.begin("another test")  # a new process would start with an empty memo: forget the in-memory copy
    second = _grading("tests/public/test_x.py::test_a", Q, calls)
    assert calls == [1]  # computed once
    np.testing.assert_array_equal(second[0], first[0])
    assert second[1] == first[1] and isinstance(second[1], np.float64)
    assert not second[0].flags.writeable  # mapped read-only: no grading can change another's expected answer


def test_other_inputs_or_tests_are_never_paired(shared):
    rng = np.random.default_rng(1)
    Q1, Q2 = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    calls = []
    a = _grading("t::one", Q1, calls)
    memo.begin("x")
    b = _grading("t::one", Q2, calls)  # same test, other inputs
    memo.begin("x")
    c = _grading("t::two", Q1, calls)  # other test, same inputs
    assert calls == [1, 1, 1]
    np.testing.assert_array_equal(b[0], Q2 * 2.0)
    np.testing.assert_array_equal(a[0], c[0])


def test_without_a_folder_nothing_is_written(tmp_path):
    calls = []
    _grading("t::solo", np.ones(3), calls)
    assert calls == [1] and not shared_expected.active() and list(tmp_path.iterdir()) == []


def test_a_class_folder_is_private_and_goes_where_asked(tmp_path, monkeypatch):
    import tempfile
    with shared_expected.class_folder("off") as folder:
        assert folder is None
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with shared_expected.class_folder("disk") as folder:
        assert folder.startswith(str(tmp_path)) and (os.stat(folder).st_mode & 0o777) == 0o700
    assert not os.path.exists(folder)  # removed with the run
    monkeypatch.setattr(shared_expected, "MEMORY_FOLDER", tmp_path / "memory")
    (tmp_path / "memory").mkdir()
    with shared_expected.class_folder("memory") as folder:
        assert folder.startswith(str(tmp_path / "memory"))
    monkeypatch.setattr(shared_expected, "ROOM_NEEDED", 1 << 60)  # no machine has that much: auto takes the disk
    with shared_expected.class_folder("auto") as folder:
        assert not folder.startswith(str(tmp_path / "memory"))


def test_a_killed_class_s_answers_are_removed_by_the_next_class(tmp_path, monkeypatch):
    """A batch killed mid-class leaves its folder behind (no `with` ends for SIGKILL): the next class removes it
    when its process is gone, and leaves a live one's, other files and other names alone."""
    import subprocess
    import sys
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = tmp_path / f"expected-{gone.pid}-abc"
    live = tmp_path / f"expected-{os.getppid()}-def"
    for folder in (dead, live):
        (folder / "answers").mkdir(parents=True)
    (tmp_path / "expected-notapid-x").mkdir()
    (tmp_path / f"expected-{gone.pid}-file").write_text("not a folder")
    monkeypatch.setattr(shared_expected, "MEMORY_FOLDER", tmp_path)
    with shared_expected.class_folder("memory") as folder:
        assert Path(folder).name.startswith(f"expected-{os.getpid()}-")
        assert not dead.exists() and live.is_dir()
        assert (tmp_path / "expected-notapid-x").is_dir() and (tmp_path / f"expected-{gone.pid}-file").is_file()
    assert not os.path.exists(folder)


def test_a_warm_grading_takes_every_answer_from_the_machine_cache_and_imports_no_torch(tmp_path):
    """The machine's cache (GRADER_CACHE_DIR/expected): the first grading computes the answers with torch, the
    next finds them all and never imports it; the folder is the grader's own."""
    import json
    import subprocess
    import sys
    from helpers import ROOT
    env = dict(os.environ, GRADER_CACHE_DIR=str(tmp_path / "cache"))
    args = [sys.executable, "-m", "grader", "grade", "--submission", str(ROOT / "solutions"), "--exercise",
            "scale_scores", "--pictures", "none", "--timings", str(tmp_path / "timings.json")]
    seen = []
    for _ in range(2):
        done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0 and "all tests pass" in done.stdout, done.stdout + done.stderr
        seen.append(json.loads((tmp_path / "timings.json").read_text())["torch_imported"])
    assert seen == [1.0, 0.0]  # cold: computed with torch; warm: not even imported
    folder = tmp_path / "cache" / "expected"
    assert [oct(p.stat().st_mode & 0o777) for p in (folder, *folder.iterdir())] == ["0o700", "0o700"]
    # warm, an endless loop waits what the oracle's time for that input allows, and the message says so
    import shutil
    import tempfile
    loop = Path(tempfile.mkdtemp(prefix="endless-"))
    try:
        loop.chmod(0o755)  # as root, the worker runs as another uid
        reference = (ROOT / "solutions" / "attention.py").read_text()
        (loop / "attention.py").write_text(reference.replace("def scale_scores(Q, K):",
                                                             "def scale_scores(Q, K):\n    while True:\n        pass", 1))
        done = subprocess.run([*args[:5], str(loop), *args[6:]], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=600)
        assert re.search(r"timed out after \d+(\.\d)? s .*the oracle takes", done.stdout, re.S), done.stdout
    finally:
        shutil.rmtree(loop)


def test_a_stub_is_reported_before_any_expected_answer_is_computed(tmp_path):
    """A stub raises at once: its tests fail before the oracle runs, so the first `make grade` of the stubs, on a
    machine with no cached answers, computes none (and imports no torch)."""
    import json
    import subprocess
    import sys
    from helpers import ROOT
    env = dict(os.environ, GRADER_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-m", "grader", "grade", "--submission", str(ROOT / "exercises"),
                           "--exercise", "row_softmax", "--pictures", "none", "--timings", str(tmp_path / "t.json")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert "not implemented yet" in done.stdout, done.stdout + done.stderr
    assert json.loads((tmp_path / "t.json").read_text())["torch_imported"] == 0.0


def test_a_class_reads_what_this_machine_computed_and_keeps_its_own_answers(tmp_path, monkeypatch):
    """A class's gradings (batch, autograde) share answers through the class's folder and read what the machine's
    cache already holds; the big inputs are kept in the machine's cache, which outlives the class."""
    monkeypatch.setattr(shared_expected, "_folder", dict(shared_expected._folder))  # this test's state only
    machine, klass = tmp_path / "machine", tmp_path / "class"
    shared_expected.use(machine, machine)  # one student's `make grade`: the machine's cache only
    shared_expected.get(("t::x", "answer"), lambda: np.arange(3.0))
    shared_expected.use(klass, machine)
    calls = []
    found = shared_expected.get(("t::x", "answer"), lambda: calls.append(1) or np.zeros(3))
    assert calls == [] and found.tolist() == [0.0, 1.0, 2.0]
    assert shared_expected.peek(("t::x", "answer")).tolist() == [0.0, 1.0, 2.0]
    shared_expected.get(("t::y", "answer"), lambda: np.ones(2))  # computed in the class: stored with the class
    shared_expected.get_input(("input", "t::y"), lambda: np.ones(4))
    assert len(list(klass.glob("*.json"))) == 1 and len(list(machine.glob("*.json"))) == 2  # t::x's, the input
    assert shared_expected.get(("t::y", "answer"), lambda: calls.append(1)).tolist() == [1.0, 1.0]
    assert calls == []
    assert shared_expected.get_input(("input", "t::y"), lambda: calls.append(1)).flags.writeable  # copy on write
