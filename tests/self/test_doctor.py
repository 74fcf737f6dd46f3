"""`python -m grader doctor`: one clear line per need, and the command that fixes what is missing."""

from types import SimpleNamespace

from grader.cuda import build
from grader.student import doctor
from helpers import run_grader


def test_this_machine_has_what_grading_needs():
    proc = run_grader("doctor")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("Python", "numpy", "torch", "g++", "Boost.Context", "nvcc", "memory"):
        assert f" {name} " in proc.stdout
    assert "everything grading needs is here" in proc.stdout


def test_a_missing_boost_is_one_clear_line_with_its_fix(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(build, "INCLUDE_DIRS", (str(tmp_path),))
    assert doctor.main(SimpleNamespace(quiet=True)) == 1
    out = capsys.readouterr().out
    assert "MISSING  Boost.Context" in out and "fix: apt-get install libboost-context-dev" in out
    assert out.splitlines()[-1] == "grading needs: Boost.Context (see the fix lines above)"
    assert " numpy " not in out  # --quiet: only what is missing


def test_a_package_at_another_version_is_named_with_its_pin(tmp_path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("numpy==0.0.1\nnot-a-real-package-here==1.0\n# a comment\n"
                            'only-elsewhere==1.0; sys_platform == "no-such-platform"\n')
    needs = {n.name: n for n in doctor.packages(requirements)}
    assert "only-elsewhere" not in needs  # its marker says this machine does not need it
    assert not needs["numpy"].ok and "(pinned: 0.0.1)" in needs["numpy"].detail
    assert needs["not-a-real-package-here"].detail == "not installed (pinned: 1.0)"
