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
import sys
import zipfile
from pathlib import Path
from grader.common.layout import ROOT
from grader.judge import hidden_seed
from grader.sandbox import isolation

SOURCE = ["grader", "tests/public", "tests/hidden", "csrc/cuda_cpu", "conftest.py", "requirements/grading.txt",
          "requirements/torch-cpu.txt", "solutions/attention.py", "solutions/microgpt_cuda.cu"]

# Written for Gradescope's documented Ubuntu base images: 22.04 (the default, whose python3 is 3.10) and 24.04
# (python3 3.12). The pins need Python 3.11 or newer; torch comes from PyTorch's CPU-only index (a plain index
# brings the multi-GB CUDA build); only what grading needs is installed (requirements/grading.txt), no Jupyter.
# The venv is made from the system's Python in /usr/bin, never from the first python3 on PATH: an image whose
# python3 is pyenv's keeps it under /root, which the workers' uid cannot enter, so bubblewrap could not bind it
# into their boxes and the grader would refuse to grade (grader/sandbox/bubblewrap.py).
# AUTOGRADER_ROOT and SYSTEM_BIN let tests/self/test_batch.py run it against stand-in commands.
SETUP_SH = f"""\
#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image (Ubuntu 22.04 or 24.04, as root).
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
BIN="${{SYSTEM_BIN:-/usr/bin}}"  # the system's Python, whatever python3 PATH finds first
apt-get update -qq
# bubblewrap: each worker's box (grader/sandbox/bubblewrap.py); without one the grader refuses to grade
apt-get install -y -qq g++ libboost-context-dev bubblewrap
if [ -x "$BIN/python3" ] && "$BIN/python3" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  PYTHON="$BIN/python3"
  apt-get install -y -qq python3-venv
else
  PYTHON="$BIN/python3.11"  # Ubuntu 22.04's universe has it
  apt-get install -y -qq python3.11 python3.11-venv
fi
"$PYTHON" -m venv "$ROOT/venv"
TORCH="$(grep -E '^torch==' "$ROOT/source/requirements/grading.txt")"
"$ROOT/venv/bin/pip" install --quiet --disable-pip-version-check --no-deps \\
  -r "$ROOT/source/requirements/torch-cpu.txt" "$TORCH"
"$ROOT/venv/bin/pip" install --quiet --disable-pip-version-check -r "$ROOT/source/requirements/grading.txt"
# The CPU runtime every kernel links, compiled once into the image, and every expected answer of both suites,
# computed once by grading the reference: each submission's fresh container then builds only the student's kernel
# (the runtime took about 10 s of CPU of every grading) and computes no answer (about 20 s more, with torch)
cd "$ROOT/source"
GRADER_HEAP=lean "$ROOT/venv/bin/python" -m grader prebuild
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
refuse() {  # nothing gradable was uploaded: say what to upload, in the student's words
  printf '{"score": 0, "output": "%s", "tests": []}\\n' "$1" > "$ROOT/results/results.json"
  rm -rf "$WORK"
  exit 0
}
if [ ! -f "$WORK/attention.py" ]; then
  notebook="$(find "$ROOT/submission" -name '*.ipynb' -type f | head -n 1)"
  if [ -n "$notebook" ]; then
    said="$("$PY" -m grader from-notebook "$notebook" "$WORK" 2>&1)" || refuse "$(printf '%s' "$said" | tr -d '\\n\"')"
  else
    refuse "Your submission has no attention.py: upload attention.py and microgpt_cuda.cu (or the course notebook attention.ipynb with your answers)."
  fi
fi
# Gradescope's container counts every byte: freed arrays go back at once (grader/common/environment.py). No
# pictures: Gradescope shows results.json, not files, and drawing one ran the student's code once more and the
# oracle (torch: seconds and hundreds of MB) for every failing pictured exercise
GRADER_HEAP=lean GRADER_ISOLATION_POLICY={policy} "$PY" -m grader grade --submission "$WORK" --suite all --pictures none --results "$WORK.results.json"
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
    isolation.add_class_argument(parser)
    parser.add_argument("--lang", metavar="LL", help="the course's language, for the students' results on Gradescope "
                        "(make gradescope COURSE_LANG=ja; en, zh, sv or ja; default: English)")


def build(out, policy=isolation.Policy.REQUIRED, lang=None):
    """The zip's tree and the zip; its run_autograder grades under `policy` (a box is required unless the instructor
    allowed reduced isolation)."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    tree = out / "autograder"
    hidden_seed.ensure()  # the hidden suite's seed travels with it (grader/judge/hidden_seed.py)
    for item in SOURCE:
        src, dest = ROOT / item, tree / item  # the zip root becomes /autograder/source
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, dest)
    from grader.common import i18n
    i18n.write_course_language(tree / "grader", lang)
    (tree / "setup.sh").write_text(SETUP_SH)
    (tree / "run_autograder").write_text(RUN_AUTOGRADER.replace("{policy}", policy.value))
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
    policy = isolation.Policy.REDUCED_ALLOWED if args.allow_reduced_isolation else isolation.Policy.REQUIRED
    from grader.common import i18n
    try:
        lang = i18n.check(args.lang) if args.lang else None
    except i18n.UnknownLanguage as exc:
        print(f"grader: {exc}", file=sys.stderr)
        return 2
    zip_path, tree = build(args.out, policy, lang)
    with zipfile.ZipFile(zip_path) as z:
        names = z.namelist()
    print(f"wrote {zip_path} ({len(names)} files, {zip_path.stat().st_size // 1024} KiB); "
          f"root: {', '.join(n for n in names if '/' not in n)}")
    return 0
