"""`make gradescope`: the Gradescope autograder zip (build/gradescope/autograder.zip).

    python -m grader gradescope [--out build/gradescope]

The zip holds setup.sh, run_autograder and, beside them, the grader, both suites, the references the hidden suite
compares with, the CPU runtime. On Gradescope it is unpacked to /autograder/source; run_autograder grades
/autograder/submission (attention.py, microgpt_cuda.cu) with public + hidden suites into
/autograder/results/results.json (public tests `visible`, hidden ones `after_published`).

run_autograder takes its folder from AUTOGRADER_ROOT (default /autograder), so a self-test runs it against a
temporary folder laid out the same way.
"""

import shutil
import zipfile
from pathlib import Path
from grader.common.layout import ROOT

SOURCE = ["grader", "tests/public", "tests/hidden", "csrc/cuda_cpu", "conftest.py", "requirements.txt",
          "solutions/attention.py", "solutions/microgpt_cuda.cu"]

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image (Ubuntu, as root).
set -euo pipefail
apt-get update -qq
apt-get install -y -qq python3 python3-venv python3-pip g++ libboost-context-dev
python3 -m venv /autograder/venv
/autograder/venv/bin/pip install --quiet --disable-pip-version-check -r /autograder/source/requirements.txt
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission. AUTOGRADER_ROOT lets a test run it outside /autograder.
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PY="${AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}"
mkdir -p "$ROOT/results"
cd "$ROOT/source"
# Grade a copy: nothing the submission writes next to itself can be taken for a result.
WORK="$(mktemp -d)"
for f in attention.py microgpt_cuda.cu; do
  found="$(find "$ROOT/submission" -name "$f" -type f | head -n 1)"
  if [ -n "$found" ]; then cp "$found" "$WORK/$f"; fi
done
"$PY" -m grader grade --submission "$WORK" --suite all --results "$WORK.results.json"
status=$?
if [ -s "$WORK.results.json" ]; then
  mv "$WORK.results.json" "$ROOT/results/results.json"
else
  printf '{"score": 0, "output": "The grader could not run (exit code %s); please tell your instructor.", "tests": []}\\n' "$status" > "$ROOT/results/results.json"
fi
rm -rf "$WORK"
exit 0
"""


def add_arguments(parser):
    parser.add_argument("--out", default=str(ROOT / "build" / "gradescope"), help="where the zip goes")


def build(out):
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    tree = out / "autograder"
    for item in SOURCE:
        src, dest = ROOT / item, tree / item  # the zip root becomes /autograder/source
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, dest)
    (tree / "setup.sh").write_text(SETUP_SH)
    (tree / "run_autograder").write_text(RUN_AUTOGRADER)
    for name in ("setup.sh", "run_autograder"):
        (tree / name).chmod(0o755)
    zip_path = out / "autograder.zip"
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as z:
        # setup.sh and run_autograder at the zip's root, as Gradescope requires
        for path in sorted(tree.rglob("*")):
            if path.is_file():
                info = zipfile.ZipInfo.from_file(path, str(path.relative_to(tree)))
                z.writestr(info, path.read_bytes())
    return zip_path, tree


def main(args):
    zip_path, tree = build(args.out)
    with zipfile.ZipFile(zip_path) as z:
        names = z.namelist()
    print(f"wrote {zip_path} ({len(names)} files, {zip_path.stat().st_size // 1024} KiB); "
          f"root: {', '.join(n for n in names if '/' not in n)}")
    return 0
