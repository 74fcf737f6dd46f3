"""`python -m grader classroom`: grade for GitHub Classroom and emit its result format.

    python -m grader classroom [--submission exercises] [--suite public]

Prints the scorecard, then writes `result=<base64 JSON>` to $GITHUB_OUTPUT (or prints it when that is unset):
{"version": 1, "status": "pass"|"fail"|"error", "max_score", "tests": [{name, status, score, message,
test_code, filename, line_no, duration}]}, the format of autograding-command-grader, which
autograding-grading-reporter sums. A student's repository has the public suite only.
"""

import base64
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from grader.common.layout import ROOT



def add_arguments(parser):
    parser.add_argument("--submission", default=str(ROOT / "exercises"),
                        help="folder holding attention.py (default: exercises/)")
    parser.add_argument("--suite", choices=["public", "hidden", "all"], default="public")
    parser.add_argument("--output", metavar="FILE", default=os.environ.get("GITHUB_OUTPUT"),
                        help="append result=... here (default: $GITHUB_OUTPUT; printed when unset)")


def to_classroom(results):
    tests = []
    for t in results.get("tests", []):
        tests.append({"name": t["name"], "status": "pass" if t["status"] == "passed" else "fail",
                      "score": t["score"], "message": t["output"][:1000], "test_code": t["name"].split(": ", 1)[-1],
                      "filename": "", "line_no": 0, "duration": 0})
    max_score = sum(t["max_score"] for t in results.get("tests", []))
    status = "pass" if tests and all(t["status"] == "pass" for t in tests) else "fail"
    return {"version": 1, "status": status if tests else "error", "max_score": max_score, "tests": tests}


def main(args):
    with tempfile.TemporaryDirectory() as private:
        results_file = Path(private) / "results.json"
        proc = subprocess.run([sys.executable, "-m", "grader", "grade", "--submission", args.submission,
                               "--suite", args.suite, "--results", str(results_file)], cwd=ROOT)
        try:
            results = json.loads(results_file.read_text())
        except (OSError, ValueError):
            results = {}
    payload = to_classroom(results)
    encoded = base64.b64encode(json.dumps(payload).encode()).decode()
    line = f"result={encoded}"
    if args.output:
        with open(args.output, "a") as f:
            f.write(line + "\n")
    else:
        print(line)
    earned = sum(t["score"] for t in payload["tests"])
    print(f"GitHub Classroom: {earned:g} / {payload['max_score']:g} points, status {payload['status']}")
    return 0 if proc.returncode in (0,) or payload["tests"] else 1
