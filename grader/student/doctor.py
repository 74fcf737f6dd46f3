"""`python -m grader doctor` (make doctor): does this machine have everything grading needs?

One line per need: ok, MISSING (grading cannot work fully) or warning (a check is skipped, or grading may run short
of memory), with the command that fixes it. Students run it on their laptop or in a JupyterHub image; `make release`, `make autograde`
and `make gradescope` run it first. Exits 1 when something required is missing.
"""

import importlib.metadata
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.common.i18n import _
from grader.common.layout import ROOT

MIN_PYTHON = (3, 11)  # numpy 2.4, matplotlib 3.11 and nbgrader 0.9.6 need it
MIN_MEMORY = 3 << 30  # one grading peaked at 1.6 GiB (grader and workers, make bench): room to spare
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;#]+)")


@dataclass
class Need:
    name: str
    ok: bool
    required: bool
    detail: str
    fix: str = ""

    @property
    def status(self):
        return _("ok") if self.ok else (_("MISSING") if self.required else _("warning"))


def python_version():
    ok = sys.version_info[:2] >= MIN_PYTHON
    version = ".".join(map(str, sys.version_info[:3]))
    want = ".".join(map(str, MIN_PYTHON))
    return Need("Python", ok, True, _("{version} (needs {want} or newer)").format(version=version, want=want),
                _("install Python {want}+ and rerun `make grade` (it makes .venv/ from `python3`)").format(want=want))


def packages(requirements=ROOT / "requirements.txt"):
    """Each pinned package at its pinned version (the student copy's requirements.txt pins fewer)."""
    needs = []
    if not Path(requirements).is_file():
        return [Need("requirements.txt", False, True, _("not found in {folder}").format(
                     folder=Path(requirements).parent),
                     _("run doctor from the repository (or the assignment's grading/ folder) that holds it"))]
    for line in Path(requirements).read_text().splitlines():
        if line.startswith("-r "):  # requirements.txt includes requirements/*.txt
            needs += packages(Path(requirements).parent / line[3:].strip())
            continue
        match = PIN.match(line.strip())
        if not match or not _applies(line):
            continue
        name, pinned = match.groups()
        try:
            found = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found = None
        same = found is not None and found.split("+")[0] == pinned  # torch's CPU wheel is 2.13.0+cpu
        detail = f"{found}" if same else _("{found} (pinned: {pinned})").format(found=found or _("not installed"),
                                                                                 pinned=pinned)
        needs.append(Need(name, same, True, detail,
                          f"{sys.executable} -m pip install -r {requirements}"))
    return needs


def _applies(line):
    """Whether a requirement's environment marker (`; sys_platform == "linux"`) holds on this machine."""
    _pin, _semicolon, marker = line.partition(";")
    if not marker.strip():
        return True
    from packaging.markers import Marker  # matplotlib's dependency: installed wherever grading is
    return Marker(marker.strip()).evaluate()


def compiler_and_boost():
    from grader.cuda import build
    gxx = shutil.which("g++")
    boost = next((Path(d) / build.BOOST_CONTEXT for d in build.INCLUDE_DIRS
                  if (Path(d) / build.BOOST_CONTEXT).exists()), None)
    return [Need("g++", gxx is not None, True, gxx or _("not found (the kernel is built for the CPU with it)"),
                 "apt-get install g++"),
            Need("Boost.Context", boost is not None, True,
                 str(boost) if boost else _("not found: the CPU runtime runs each CUDA thread as its fiber"),
                 "apt-get install libboost-context-dev")]


def cuda_and_sandbox_tools():
    from grader.cuda import nvcc as nvcc_check
    nvcc = nvcc_check.checker()
    from grader.sandbox import bubblewrap
    why_not = bubblewrap.probe()  # installed is not enough: the machine must allow its namespaces and reach the venv
    box = _("{bwrap}: each worker gets a box").format(bwrap=shutil.which(bubblewrap.BWRAP)) if why_not is None else \
        _("{why}: a student's grading is fenced in without it (isolation: reduced); a class's (autograde, batch, "
          "Gradescope) refuses unless --allow-reduced-isolation").format(why=why_not)
    return [Need("nvcc", nvcc is not None, sys.platform == "linux",  # pinned there (requirements/grading.txt)
                 nvcc or _("not found: the check that the kernel compiles as real CUDA cannot run here and scores 0 "
                           "(its point stays in the maximum)"),
                 f"{sys.executable} -m pip install -r requirements.txt"),
            Need("bubblewrap", why_not is None, False, box, why_not.fix if why_not is not None else "")]


def memory():
    available = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if available is None:
        return Need("memory", True, False, _("cannot tell (no /proc/meminfo)"))
    gib = available / (1 << 30)
    return Need("memory", available >= MIN_MEMORY, False,
                _("{gib} GiB available (one grading peaked at 1.6 GiB: make bench)").format(gib=f"{gib:.1f}"),
                _("close other programs, or give the machine (or the JupyterHub server) at least 3 GiB"))


def check():
    return [python_version(), *packages(), *compiler_and_boost(), *cuda_and_sandbox_tools(), memory()]


def add_arguments(parser):
    parser.add_argument("--quiet", action="store_true",
                        help="print only what grading cannot do without (make release, autograde, gradescope)")


def main(args):
    needs = check()
    width = max(len(n.name) for n in needs)
    for need in needs:
        if args.quiet and (need.ok or not need.required):
            continue
        line = f"{need.status:<8} {need.name:<{width}}  {need.detail}"
        if not need.ok and need.fix:
            line += f"\n{'':<8} {'':<{width}}  " + _("fix: {fix}").format(fix=need.fix)
        print(line)
    missing = [n.name for n in needs if n.required and not n.ok]
    if missing:
        print(_("grading needs: {missing} (see the fix lines above)").format(missing=", ".join(missing)))
        return 1
    if not args.quiet:
        print(_("everything grading needs is here") if all(n.ok for n in needs)
              else _("everything grading needs is here (warnings aside)"))
    return 0
