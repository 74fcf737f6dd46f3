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
    for path in [*(ROOT / "grader").rglob("*.py"), *(ROOT / "csrc" / "cuda_cpu").rglob("*.cpp"), ROOT / "Makefile",
                 ROOT / ".ci" / "run", *(ROOT / "tests" / "public").rglob("*.py"), *(ROOT / "tests" / "hidden").rglob("*.py")]:
        text = path.read_text(errors="replace")
        used |= set(re.findall(r"[\"'$](GRADER_[A-Z_]+)\b", text)) | set(re.findall(r"\b(GRADER_[A-Z_]+)=", text))
    assert used - set(settings.BY_NAME) == set()
    assert (ROOT / "docs" / "settings.md").read_text() == settings.markdown()


def test_the_runtime_is_every_cpp_file_of_its_src_folder_and_its_build_file_lists_them():
    """csrc/cuda_cpu/runtime.ninja lists the runtime's sources, and they are the .cpp files of csrc/cuda_cpu/src:
    a file added there and not listed would ship and never be built (a yardstick or a whole solution belongs under
    solutions/); the build refuses it."""
    from grader.cuda import build
    assert set(build.runtime_sources()) == {p.name for p in build.RUNTIME_SRC.glob("*.cpp")}
    assert {p.parent.name for p in build.RUNTIME.rglob("*.cpp")} == {"src"}


def test_the_build_names_a_source_its_build_file_does_not_list(tmp_path, monkeypatch):
    from grader.cuda import build
    for name in build.runtime_sources():
        (tmp_path / name).write_text("")
    (tmp_path / "new_part.cpp").write_text("int forgotten() { return 1; }\n")
    monkeypatch.setattr(build, "RUNTIME_SRC", tmp_path)
    assert build._unlisted_sources() == ["new_part.cpp"]


def test_two_sources_of_one_unit_that_declare_one_file_scope_name_are_named(tmp_path):
    """Two functions of one name and different parameters, one per file, become overloads in one unit without a
    word from the compiler: grader/cuda/unit_names.py finds them in the debug information, inlined or not."""
    from grader.cuda import unit_names
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.cpp").write_text("namespace {\ninline int pick(int x) { return x; }\n}\n"
                                            "int from_a(int x) { return pick(x); }\n")
    (tmp_path / "src" / "b.cpp").write_text("namespace {\n\nstatic int unused = 0;\n"
                                            "int pick(float x) { return int(x) + 1; }\n}\n"
                                            "int from_b(float x) { return pick(x); }\nstatic int lonely() { return 2; }\n"
                                            "int from_b2() { return lonely(); }\n")
    (tmp_path / "unit.cpp").write_text('#include "a.cpp"\n#include "b.cpp"\n')
    obj = tmp_path / "unit.o"
    subprocess.run(["g++", "-O2", "-g", "-I", str(tmp_path / "src"), "-c", str(tmp_path / "unit.cpp"), "-o", str(obj)],
                   check=True)
    assert unit_names.clashes(obj, tmp_path / "src") == ["pick: a.cpp:2 and b.cpp:4"]
    (tmp_path / "src" / "b.cpp").write_text((tmp_path / "src" / "b.cpp").read_text().replace("pick", "choose"))
    subprocess.run(["g++", "-O2", "-g", "-I", str(tmp_path / "src"), "-c", str(tmp_path / "unit.cpp"), "-o", str(obj)],
                   check=True)
    assert unit_names.clashes(obj, tmp_path / "src") == []


def test_the_runtime_guides_list_of_what_is_not_emulated_is_not_emulated_pys_own():
    """docs/cuda-cpu-runtime.md's list is generated from grader/cuda/not_emulated.py (`python -m grader not-emulated
    --markdown`)."""
    from grader.cuda import not_emulated
    text = (ROOT / "docs" / "cuda-cpu-runtime.md").read_text()
    generated = text.split("<!-- generated: python -m grader not-emulated --markdown -->\n")[1].split("<!-- end generated")[0]
    assert generated == not_emulated.markdown()


def test_the_docs_table_of_commands_is_grader_commands_own():
    """docs/README.md's table of commands is generated from grader/commands.py (`python -m grader --markdown`)."""
    from grader import commands
    text = (ROOT / "docs" / "README.md").read_text()
    generated = text.split("<!-- generated: python -m grader --markdown -->\n")[1].split("<!-- end generated -->")[0]
    assert generated == commands.markdown()
