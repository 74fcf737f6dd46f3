"""The student repository (build/student/): exercises/, the kernel stub, the public suite, the student's part of
the grader, the CPU runtime, a Makefile whose `make grade` runs the public suite, and the student README
(docs/student/README.md).

What it carries is an allow-list of folders, each whole: the subpackages of grader/ that `make grade` and the
Classroom workflow need, the public suite, the CPU runtime. The instructor's grader/course (the class report among
it) and the maintainer's grader/dev stay behind, and the import-linter contract in
.importlinter keeps the student's packages from importing them (tests/self/test_release.py builds the repository
and grades the reference in it).
"""

import hashlib
import shutil
from pathlib import Path

from grader.common.layout import KERNEL_FILE, ROOT, SUBMISSION_FILE

STUDENT_PACKAGES = ("common", "sandbox", "cuda", "judge", "suite", "report", "student", "warm", "locale")
STUDENT_MODULES = ("__init__.py", "__main__.py", "commands.py")
STUDENT_README = ROOT / "docs" / "student" / "README.md"
RUNTIME_GUIDE = ROOT / "docs" / "cuda-cpu-runtime.md"


def copy_student_grader(dest, lang=None):
    """The files `python -m grader grade --suite public` needs, into dest (a repository root), speaking lang (the
    course's language; None: the locale's)."""
    from grader.common import i18n
    dest = Path(dest)
    (dest / "grader").mkdir(parents=True, exist_ok=True)
    for name in STUDENT_MODULES:
        shutil.copy2(ROOT / "grader" / name, dest / "grader" / name)
    for package in STUDENT_PACKAGES:
        shutil.copytree(ROOT / "grader" / package, dest / "grader" / package, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests" / "public", dest / "tests" / "public",
                    ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    shutil.copytree(ROOT / "csrc" / "cuda_cpu", dest / "csrc" / "cuda_cpu", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "csrc" / "cuda_gpu", dest / "csrc" / "cuda_gpu", dirs_exist_ok=True)  # students with a GPU
    if (ROOT / "docs" / "pictures").is_dir():  # the README shows one
        shutil.copytree(ROOT / "docs" / "pictures", dest / "docs" / "pictures", dirs_exist_ok=True)
    shutil.copy2(ROOT / "conftest.py", dest / "conftest.py")
    # grading only: no course or development tools; what `grader doctor` checks there. Copied with its time, as
    # every other file here: a venv already installed from it is not reinstalled because the copy is newer
    shutil.copy2(ROOT / "requirements" / "grading.txt", dest / "requirements.txt")
    shutil.copy2(ROOT / "requirements" / "torch-cpu.txt", dest / "torch-cpu.txt")
    shutil.copy2(ROOT / "requirements" / "uv.txt", dest / "uv.txt")
    i18n.write_course_language(dest / "grader", lang)


# the student repository's own files, as they ship (its Makefile installs and grades; tested by the release test)
STUDENT_FILES = Path(__file__).resolve().parent / "student_files"


def translation_header():
    """The first line of each translation of the student guide: the digest of the English it was made from (a test
    fails when the English changes and its translations do not follow)."""
    digest = hashlib.sha256(STUDENT_README.read_bytes()).hexdigest()[:16]
    return f"<!-- translated from README.md, sha256 {digest} -->"


def student_readme(lang=None):
    """The student guide in lang: its translation (docs/student/README.LL.md) where lang is not English."""
    if lang and lang != "en":
        return STUDENT_README.with_name(f"README.{lang}.md")
    return STUDENT_README


def build_student_repo(dest, lang=None):
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    copy_student_grader(dest, lang)
    (dest / "exercises").mkdir()
    shutil.copy2(ROOT / "exercises" / SUBMISSION_FILE, dest / "exercises" / SUBMISSION_FILE)
    shutil.copy2(ROOT / "csrc" / KERNEL_FILE, dest / "csrc" / KERNEL_FILE)
    for name in ("Makefile", "system-deps.mk"):
        shutil.copy2(STUDENT_FILES / name, dest / name)
    # the guide's kernel section points to the runtime's own guide, which ships beside the pictures
    (dest / "docs").mkdir(exist_ok=True)
    shutil.copy2(RUNTIME_GUIDE, dest / "docs" / RUNTIME_GUIDE.name)
    # at the student repository's root, those are under docs/ (here: ../)
    readme = student_readme(lang).read_text(encoding="utf-8")
    for linked in ("pictures/", RUNTIME_GUIDE.name):
        readme = readme.replace(f"](../{linked}", f"](docs/{linked}")
    (dest / "README.md").write_text(readme, encoding="utf-8")
    (dest / ".gitignore").write_text(".venv/\n__pycache__/\n*.pyc\nbuild/\nresults.json\n")
    workflow = ROOT / ".github" / "classroom" / "classroom.yml"
    if workflow.is_file():  # GitHub Classroom grades the student's repository with the public suite
        (dest / ".github" / "workflows").mkdir(parents=True)
        shutil.copy2(workflow, dest / ".github" / "workflows" / "classroom.yml")
    return dest
