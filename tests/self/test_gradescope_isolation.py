"""Gradescope's autograder never lets a submission see what the image holds: a probe submission looks for the
reference, the hidden suite and its seed through every process's working folder, connects to a listener on
127.0.0.1 and runs a shell command, then puts all it found into a test's message. Graded from the zip in an
/autograder layout, with a venv made from the system's Python (what setup.sh makes) and with one made from a
Python under a private home (pyenv's, under /root: what setup.sh made before it chose /usr/bin's):

- the system's Python: graded in a box, the probe finds nothing;
- a private home's Python, by default: refused before any student code runs, results.json naming the cause;
- a private home's Python with --allow-reduced-isolation: graded as root in the reduced fence, and the probe does
  find the answers (which shows it can), but every test is hidden from students and the visible summary says so.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import threading
import zipfile
from pathlib import Path

import pytest

from grader.common.layout import CACHE_ROOT
from grader.course.make_exercises import render
from grader.report import results as results_json
from grader.sandbox import bubblewrap, uids
from helpers import ROOT, run_grader

pytestmark = [
    pytest.mark.skipif(not uids.is_root(), reason="Gradescope grades as root: the private home is root's"),
    pytest.mark.skipif(bubblewrap.probe() is not None, reason=f"no box here: {bubblewrap.probe()}"),
]

STUB = render(ROOT / "solutions" / "attention.py")
PROBE_PRELUDE = '''
import json as _json
import os as _os
import socket as _socket
import subprocess as _subprocess

_SECRETS = ("solutions/attention.py", "tests/hidden/hidden_seed.txt", "tests/hidden/test_hidden_row_softmax.py")
_FOUND = {"uid": _os.getuid(), "read": [], "connected": False, "shell": None}
for _pid in [p for p in _os.listdir("/proc") if p.isdigit()]:
    for _rel in _SECRETS:
        try:
            with open(f"/proc/{_pid}/cwd/{_rel}", "rb") as _f:
                _f.read(1)
            _FOUND["read"].append(_rel)
        except OSError:
            pass
_FOUND["read"] = sorted(set(_FOUND["read"]))
try:
    _socket.create_connection(("127.0.0.1", PORT), timeout=2).close()
    _FOUND["connected"] = True
except OSError:
    pass
try:
    _FOUND["shell"] = _subprocess.run(["sh", "-c", "id -u"], capture_output=True, text=True,
                                      timeout=10).stdout.strip()
except Exception as _exc:
    _FOUND["shell"] = type(_exc).__name__


def row_softmax(scores):
    raise ValueError("PROBE " + _json.dumps(_FOUND, sort_keys=True))
'''


def probe_submission(port):
    dk = STUB.replace("""    # YOUR CODE HERE
    raise NotImplementedError()""", """    if not all(type(v) is int and v > 0 for v in (d_model, n_head)) or d_model % n_head:
        raise ValueError("d_model and n_head must be positive ints, n_head dividing d_model")
    return d_model // n_head""", 1)
    return dk + PROBE_PRELUDE.replace("PORT", str(port))


@pytest.fixture
def listener():
    """A TCP listener on 127.0.0.1; .connections counts who reached it."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    state = {"connections": 0, "stop": False}

    def accept():
        while not state["stop"]:
            try:
                conn, _ = server.accept()
                state["connections"] += 1
                conn.close()
            except OSError:
                continue
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], state
    state["stop"] = True
    thread.join()
    server.close()


def private_home_python(home):
    """A Python installed under `home` (mode 0700, as /root is), the way pyenv installs one: this interpreter's
    binary and standard library, hard-linked (copied where links cannot be made) into home/.pyenv/versions/X.Y.
    Returns its executable."""
    home.mkdir(mode=0o700)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    prefix = home / ".pyenv" / "versions" / version
    (prefix / "bin").mkdir(parents=True)
    executable = prefix / "bin" / f"python{version}"
    shutil.copy2(os.path.realpath(sys._base_executable), executable)
    stdlib = sysconfig.get_paths()["stdlib"]
    try:
        shutil.copytree(stdlib, prefix / "lib" / f"python{version}", copy_function=os.link, symlinks=True)
    except OSError:
        shutil.rmtree(prefix / "lib", ignore_errors=True)
        shutil.copytree(stdlib, prefix / "lib" / f"python{version}", symlinks=True)
    said = subprocess.run([executable, "-c", "import sys; print(sys.base_prefix)"], capture_output=True, text=True)
    assert said.stdout.strip() == str(prefix), said.stdout + said.stderr
    return executable


def venv_from(python, where):
    """A venv made by `python`, holding (as links) this venv's packages: what setup.sh's pip would install."""
    subprocess.run([python, "-m", "venv", "--without-pip", where], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    ours = Path(sysconfig.get_paths()["purelib"])
    theirs = Path(where) / "lib" / version / "site-packages"
    for entry in ours.iterdir():
        (theirs / entry.name).symlink_to(entry)
    return Path(where) / "bin" / "python"


def autograder(tmp_path, root, *zip_args):
    """The zip unpacked in `root`, an /autograder layout other uids can enter (as /autograder is)."""
    proc = run_grader("gradescope", "--out", tmp_path / "zip", *zip_args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with zipfile.ZipFile(tmp_path / "zip" / "autograder.zip") as z:
        z.extractall(root / "source")
    return root


def run_autograder(root, python, upload):
    (root / "submission").mkdir(exist_ok=True)
    for name, text in upload.items():
        (root / "submission" / name).write_text(text)
    run = root / "source" / "run_autograder"
    run.chmod(0o755)
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=str(python),
               GRADER_CACHE_DIR=str(CACHE_ROOT))  # this machine's inputs and answers: what is tested is who sees what
    done = subprocess.run([str(run)], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((root / "results" / "results.json").read_text())


def probe_reports(results, visibility=None):
    """What the probe said, from the tests of the given visibility (all tests when None)."""
    found = []
    for test in results["tests"]:
        if visibility is not None and test["visibility"] != visibility:
            continue
        for line in test["output"].splitlines():
            if "PROBE {" in line:
                found.append(json.loads(line[line.index("PROBE {") + len("PROBE "):].split("}", 1)[0] + "}"))
    return found


def test_with_the_system_python_the_probe_runs_in_a_box_and_finds_nothing(tmp_path, open_tmp, listener):
    port, seen = listener
    root = autograder(tmp_path, open_tmp)
    results = run_autograder(root, sys.executable, {"attention.py": probe_submission(port)})
    reports = probe_reports(results)
    assert reports, [t["output"] for t in results["tests"]]  # the probe ran and said what it found
    for report in reports:
        assert report["read"] == [] and not report["connected"], report
        assert report["uid"] != 0 and report["shell"] != "0", report
    assert seen["connections"] == 0
    assert results["extra_data"]["isolation"].startswith("full")


def test_with_a_private_home_python_grading_is_refused_naming_the_cause(tmp_path, open_tmp, listener):
    port, seen = listener
    root = autograder(tmp_path, open_tmp)
    python = venv_from(private_home_python(tmp_path / "root"), root / "venv")  # setup.sh's place for it
    results = run_autograder(root, python, {"attention.py": probe_submission(port)})
    assert results["score"] == 0 and results["tests"] == [] and seen["connections"] == 0
    assert "PROBE" not in json.dumps(results)  # no student code ran
    cause = f"this Python ({tmp_path / 'root' / '.pyenv'}"
    assert cause in results["output"] and "which the workers' uid cannot enter" in results["output"]
    assert results["output"].startswith(results_json.REFUSED.split("(")[0])
    assert "--allow-reduced-isolation" in results["extra_data"]["isolation"]


def test_reduced_isolation_allowed_hides_every_test_from_students(tmp_path, open_tmp, listener):
    """The instructor's opt-in: graded in the fence, where (as root, the Python out of a dropped uid's reach) the
    probe finds the answers and reaches the listener; students see the scores and the withheld note only."""
    port, seen = listener
    root = autograder(tmp_path, open_tmp, "--allow-reduced-isolation")
    python = venv_from(private_home_python(tmp_path / "root"), root / "venv")
    results = run_autograder(root, python, {"attention.py": probe_submission(port)})
    assert results["extra_data"]["isolation"].startswith("reduced: this Python")
    assert {t["visibility"] for t in results["tests"]} == {"hidden"}
    assert "PROBE" not in results["output"] and results_json.WITHHELD in results["output"]
    reports = probe_reports(results, visibility="hidden")
    assert reports and any(r["read"] for r in reports), reports  # it could, and did: only the instructor sees it
    assert probe_reports(results, visibility="visible") == []
    assert results["score"] > 0 and seen["connections"] >= 1  # compute_dk counts; the fence let it connect


def test_doctor_names_a_private_home_python_as_the_cause_with_its_fix(tmp_path, open_tmp):
    """Not "install bubblewrap" (it is installed), nor namespaces refused: the Python, where it lies, the fix."""
    root = autograder(tmp_path, open_tmp)
    python = venv_from(private_home_python(tmp_path / "root"), root / "venv")
    proc = subprocess.run([python, "-m", "grader", "doctor"], cwd=root / "source", capture_output=True,
                          text=True, timeout=300)
    line = next(line for line in proc.stdout.splitlines() if " bubblewrap " in line)
    said = " ".join(proc.stdout.split())
    assert line.startswith("warning") and f"this Python ({tmp_path / 'root' / '.pyenv'}" in line, proc.stdout
    assert "fix: build the venv from a Python outside private home folders (/usr/bin/python3" in said
    assert "apt-get install bubblewrap" not in said and "seccomp" not in said
    assert "a class's (autograde, batch, Gradescope) refuses unless --allow-reduced-isolation" in said
