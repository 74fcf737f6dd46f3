"""Running the grader as a user would, for the self-tests."""

import json
import subprocess
import sys
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
