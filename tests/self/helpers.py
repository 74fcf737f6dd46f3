"""Running the grader as a user would, for the self-tests."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_grader(*args, timeout=600):
    """Run `python -m grader ...` from the repository root; return the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def grade_to_json(folder, tmp_path, *extra):
    """Grade folder with the CLI; return (results.json dict, scorecard text)."""
    out = tmp_path / "results.json"
    proc = run_grader("grade", "--submission", folder, "--results", out, "--report-dir", tmp_path / "grade-report",
                      *extra)  # pictures of failing exercises: in tmp_path, not the repository's grade-report/
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(out.read_text()), proc.stdout


def gradescope_image(tmp_path):
    """Gradescope's zip, built and unpacked in an /autograder layout (tmp_path/autograder/source); its root."""
    proc = run_grader("gradescope", "--out", tmp_path / "zip")
    assert proc.returncode == 0, proc.stderr
    root = tmp_path / "autograder"
    with zipfile.ZipFile(tmp_path / "zip" / "autograder.zip") as z:
        z.extractall(root / "source")
    return root


def grade_upload(root, upload, preexec_fn=None, env=()):
    """run_autograder once more in the image root holds, on another upload: a submission's grading, as in a fresh
    container from the image (setup.sh's files as they were; run_autograder writes results/ only)."""
    shutil.rmtree(root / "submission", ignore_errors=True)
    shutil.rmtree(root / "results", ignore_errors=True)
    (root / "submission").mkdir(parents=True)
    for name, text in upload.items():
        (root / "submission" / name).write_text(text)
    run = root / "source" / "run_autograder"
    run.chmod(0o755)
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=sys.executable, **dict(env))
    done = subprocess.run([str(run)], env=env, capture_output=True, text=True, timeout=900, preexec_fn=preexec_fn)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((root / "results" / "results.json").read_text())
