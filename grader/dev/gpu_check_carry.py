"""`python -m grader gpu-check-carry --samples PATH` (`make gpu-check-carry SAMPLES=PATH`): the folder .gpucheck/
copied with the checkout to a GPU machine that reaches no network, holding what such a machine lacks and cannot
fetch: docs/gpu-check.md.

  debs/           Debian's Boost.Context packages (headers and libboost_context.so), which the CPU runtime needs;
                  grader/dev/gpu_check_device.sh unpacks them under /usr/local when the image has no Boost
  whl/            the pure-Python packages grading was tested with, at this venv's versions (pytest, its plugin
                  xdist, rich, and what they need), installed there into /tmp/site
  cuda-samples/   Common/ and the listed samples' folders (cuda_samples.SAMPLES) of a cuda-samples checkout
                  (never committed here)
  cpu-report.json an earlier gpu-check.json from a machine without a GPU (--cpu-report): the CPU runtime's side,
                  so the device spends its minutes on the GPU

The sizes are printed, the working tree's beside the folder's; where the copy to that machine is limited in size,
--limit MIB refuses a folder that would not fit with the working tree.
"""

import importlib.metadata
import re
import shutil
import subprocess
import sys
from pathlib import Path

from grader.common.layout import ROOT
from grader.dev import cuda_samples

CARRY = ROOT / ".gpucheck"
# pure Python: one wheel each serves the device's Python 3.12
WHEELS = ("pytest", "pluggy", "iniconfig", "packaging", "pygments", "rich", "markdown-it-py", "mdurl",
          "pytest-xdist", "execnet")
BOOST_HEADER = "/usr/include/boost/context/fiber.hpp"
APT_CACHE = Path("/var/cache/apt/archives")


def add_arguments(parser):
    parser.add_argument("--samples", type=Path, required=True, metavar="PATH", help="a cuda-samples checkout")
    parser.add_argument("--out", type=Path, default=CARRY, help="the folder to fill (default: .gpucheck)")
    parser.add_argument("--limit", type=float, default=None, metavar="MIB",
                        help="refuse a folder that, with the working tree, holds more than MIB (default: no limit)")
    parser.add_argument("--cpu-report", type=Path, metavar="JSON",
                        help="a gpu-check.json from a machine without a GPU (default: build/gpu-check/'s, if any)")


def size(path):
    path = Path(path)
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def boost_packages():
    """The Debian packages of this machine's Boost.Context: the headers' package, its context -dev and library."""
    owner = subprocess.run(["dpkg", "-S", BOOST_HEADER], capture_output=True, text=True).stdout.split(":")[0]
    version = re.search(r"libboost(\d+\.\d+)-dev", owner)
    if not version:
        raise RuntimeError(f"Boost.Context is not installed from Debian's packages here ({BOOST_HEADER}): "
                           "apt-get install libboost-context-dev")
    v = version.group(1)
    return [f"libboost{v}-dev", f"libboost-context{v}-dev", f"libboost-context{v}.0"]


def fetch_debs(folder):
    folder.mkdir(parents=True)
    for package in boost_packages():
        got = subprocess.run(["apt-get", "download", package], cwd=folder, capture_output=True, text=True)
        if got.returncode != 0:  # offline: the copy apt kept when it installed them
            cached = sorted(APT_CACHE.glob(f"{package}_*.deb"))
            if not cached:
                raise RuntimeError(f"apt-get download {package} failed and apt's cache has none:\n{got.stderr}")
            shutil.copy2(cached[-1], folder)


def fetch_wheels(folder):
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in WHEELS]
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                    "--python-version", "3.12", "--implementation", "py", "-d", str(folder), *pins], check=True)


def copy_samples(root, folder):
    root = Path(root)
    if not (root / "Samples").is_dir() or not (root / "Common").is_dir():
        raise RuntimeError(f"{root} is not a cuda-samples checkout (no Samples/ and Common/)")
    ignore = shutil.ignore_patterns(".git", ".vscode", "*.sln", "*.vcxproj*", "Makefile", "*.o")
    shutil.copytree(root / "Common", folder / "Common", ignore=ignore)
    for sample in cuda_samples.SAMPLES:
        shutil.copytree(root / "Samples" / sample, folder / "Samples" / sample, ignore=ignore)


def working_tree_bytes():
    """What travels besides the carry: tracked files and untracked ones git does not ignore."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True).stdout.split("\0")
    return sum((ROOT / f).stat().st_size for f in listed if f and (ROOT / f).is_file())


def main(args):
    out = args.out.resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    fetch_debs(out / "debs")
    fetch_wheels(out / "whl")
    copy_samples(args.samples, out / "cuda-samples")
    report = args.cpu_report or ROOT / "build" / "gpu-check" / "gpu-check.json"
    if report.is_file():
        shutil.copy2(report, out / "cpu-report.json")
    elif args.cpu_report:
        print(f"no such report: {report}", file=sys.stderr)
        return 2
    tree = working_tree_bytes()
    parts = {p.name: size(p) for p in sorted(out.iterdir())}
    for name, n in parts.items():
        print(f"  {name:<16} {n / 2**20:6.1f} MiB")
    total = sum(parts.values()) + tree
    print(f"  {'working tree':<16} {tree / 2**20:6.1f} MiB\n{out}: {total / 2**20:.1f} MiB with the working tree"
          + ("" if report.is_file() else " (no cpu-report.json: run `make gpu-check` here first to spare the GPU "
                                         "machine the CPU side)"))
    if args.limit is not None and total > args.limit * 2**20:
        print(f"over --limit {args.limit:g} MiB: it would not fit", file=sys.stderr)
        return 1
    return 0
