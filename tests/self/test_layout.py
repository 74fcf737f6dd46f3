"""The grader's layout stays as designed: layered subpackages (an import-linter contract, shown to catch an
upward import), short modules, and one command registry whose --help groups the commands by audience."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

from grader import commands
from helpers import ROOT, run_grader

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
MAX_MODULE_LINES = 300


def _lint_imports(root):
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True, text=True,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, timeout=120)


def test_the_layers_hold():
    proc = _lint_imports(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 kept, 0 broken" in proc.stdout


def test_the_contract_catches_an_upward_import(tmp_path):
    """A negative control: the lowest layer importing an instructor's tool breaks the contract."""
    shutil.copytree(ROOT / "grader", tmp_path / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / ".importlinter", tmp_path / ".importlinter")
    layout = tmp_path / "grader" / "common" / "layout.py"
    layout.write_text(layout.read_text() + "\nfrom grader.course import jobs  # noqa\n")
    proc = _lint_imports(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "grader.common.layout -> grader.course.jobs" in proc.stdout


def test_no_module_over_300_lines():
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "grader").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_help_groups_the_commands_by_audience_and_hides_the_internal_one():
    proc = run_grader("--help")
    assert proc.returncode == 0
    text = proc.stdout
    assert text.index("for students:") < text.index("for instructors:") < text.index("for maintainers")
    for command in commands.COMMANDS:
        assert (f"  {command.name} " in text) == (command.audience != commands.INTERNAL), command.name
    assert "cell" not in text.split()


def test_an_unknown_command_fails_with_the_list():
    proc = run_grader("regrade")
    assert proc.returncode == 2
    names = ", ".join(c.name for c in commands.listed())
    assert "no command 'regrade'" in proc.stderr and f"the commands are: {names}" in proc.stderr


def test_every_command_has_its_own_help():
    for command in commands.COMMANDS:
        proc = run_grader(command.name, "--help")
        assert proc.returncode == 0 and f"python -m grader {command.name}" in proc.stdout, proc.stderr


def test_every_setting_the_grader_reads_is_declared_once_and_documented():
    """grader/common/settings.py holds every GRADER_* variable the code, the Makefile, CI and the CPU runtime read;
    docs/settings.md is its --markdown output, current."""
    from grader.common import settings
    used = set()
    for path in [*(ROOT / "grader").rglob("*.py"), *(ROOT / "csrc" / "cuda_cpu").glob("*.cpp"), ROOT / "Makefile",
                 ROOT / ".ci" / "run", *(ROOT / "tests" / "public").rglob("*.py"), *(ROOT / "tests" / "hidden").rglob("*.py")]:
        text = path.read_text(errors="replace")
        used |= set(re.findall(r"[\"'$](GRADER_[A-Z_]+)\b", text)) | set(re.findall(r"\b(GRADER_[A-Z_]+)=", text))
    assert used - set(settings.BY_NAME) == set()
    assert (ROOT / "docs" / "settings.md").read_text() == settings.markdown()


def test_the_runtime_is_every_cpp_file_of_its_folder():
    """build.py compiles the CPU runtime as one unit of RUNTIME_SOURCES: a .cpp added to csrc/cuda_cpu and not
    listed would be shipped and silently never built (a yardstick or a whole solution belongs under solutions/)."""
    from grader.cuda import build
    assert set(build.RUNTIME_SOURCES) == {p.name for p in (ROOT / "csrc" / "cuda_cpu").glob("*.cpp")}


def test_the_docs_table_of_commands_is_grader_commands_own():
    """docs/README.md's table of commands is generated from grader/commands.py (`python -m grader --markdown`)."""
    from grader import commands
    text = (ROOT / "docs" / "README.md").read_text()
    generated = text.split("<!-- generated: python -m grader --markdown -->\n")[1].split("<!-- end generated -->")[0]
    assert generated == commands.markdown()
