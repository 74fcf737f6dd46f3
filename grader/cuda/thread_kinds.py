"""How a built kernel library runs the threads of its kernels that wait: on fibers only, or also as coroutines
(grader/cuda/coroutines.py), recorded by the build (grader/cuda/build.py) beside the library as RECORD, and read back
for the kernel report (threads_of).
"""

import json
import os
from dataclasses import dataclass
from pathlib import Path

from grader.common import settings
from grader.common.i18n import N_
from grader.cuda import coroutines

RECORD = "threads.json"


@dataclass(frozen=True)
class BothWays:
    """Built with a coroutine copy of each function that waits: the runtime measures which way is faster."""
    kernels: tuple
    functions: tuple


@dataclass(frozen=True)
class FibersOnly:
    why: object = None  # coroutines.OnFibers, or None: nothing in the file waits


def wanted():
    """Whether the build writes coroutine copies at all (GRADER_CUDA_THREADS)."""
    return settings.CUDA_THREADS.get() != "fibers"


def plan(texts, compiled, include_dirs, defines):
    """(texts with the copies, BothWays) where every compiled .cu file that waits has its copies; else (None,
    FibersOnly(why))."""
    if not wanted():
        return None, FibersOnly(coroutines.OnFibers(N_("every kernel runs on fibers ({setting}=fibers)"),
                                                    (("setting", settings.CUDA_THREADS.name),)))
    plans = {n: coroutines.transform(texts[n], n, include_dirs, defines, texts) for n in compiled if n.endswith(".cu")}
    refused = [p for p in plans.values() if isinstance(p, coroutines.OnFibers)]
    made = {n: p for n, p in plans.items() if isinstance(p, coroutines.Transformed)}
    if refused or not made:
        return None, FibersOnly(refused[0] if refused else None)
    return ({**texts, **{n: p.text for n, p in made.items()}},
            BothWays(tuple(sorted(k for p in made.values() for k in p.kernels)),
                     tuple(sorted(f for p in made.values() for f in p.functions))))


def did_not_compile(error):
    first = str(error).strip().splitlines()[0][:200] if str(error).strip() else ""
    return FibersOnly(coroutines.OnFibers(N_("the file did not compile with the coroutine copies ({error})"),
                                          (("error", first),)))


def write(folder, kind):
    if isinstance(kind, BothWays):
        data = {"threads": "both", "kernels": list(kind.kernels), "functions": list(kind.functions)}
    else:
        why = kind.why
        data = {"threads": "fibers", "reason": why.reason if why else "", "fields": dict(why.fields) if why else {}}
    keep(Path(folder) / RECORD, json.dumps(data) + "\n")


def keep(path, text):
    """Write text to path at once (a reader sees the old file or the new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def threads_of(library):
    """BothWays or FibersOnly for a built library, or None where the build kept no record."""
    path = Path(library).parent / RECORD
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if data.get("threads") == "both":
        return BothWays(tuple(data.get("kernels", ())), tuple(data.get("functions", ())))
    reason = data.get("reason") or ""
    return FibersOnly(coroutines.OnFibers(reason, tuple(sorted(data.get("fields", {}).items()))) if reason else None)
