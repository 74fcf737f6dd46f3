"""CUDA's own headers as the spec of the device API (grader/cuda/device_api.py reads the pinned nvcc's): how many of
the device functions they declare for sm_90 the CPU runtime declares (the count README.md states), and that a
call of any other is refused at build time by name, never left as g++'s raw "was not declared"."""

import re

import pytest

from grader.cuda import build as cuda_build, device_api, nvcc
from helpers import ROOT

pytestmark = pytest.mark.skipif(nvcc.checker() is None, reason="the spec is read from the pinned nvcc's headers")
STATED = re.compile(r"Of the (\d+) device functions that CUDA's headers declare for sm_90, the CPU runtime declares "
                    r"(\d+)")


@pytest.fixture(scope="module")
def spec():
    names = device_api.names()
    return names, device_api.missing_from_runtime(names)


def test_the_spec_is_read_from_the_headers_without_cuda_s_internal_helpers(spec):
    names, _ = spec
    assert len(names) > 1000 and len(set(names)) == len(names)
    assert {"__fadd_rn", "__shfl_sync", "atomicAdd", "erfinvf", "__hadd2", "__ldcg", "__dp4a"} <= set(names)
    assert not [n for n in names if device_api.INTERNAL.search(n) or n in device_api.KEYWORDS]


def test_readme_states_the_count_the_runtime_declares(spec):
    names, missing = spec
    stated = STATED.search(" ".join((ROOT / "README.md").read_text().split()))
    assert stated, "README.md no longer states the count"
    assert (int(stated.group(1)), int(stated.group(2))) == (len(names), len(names) - len(missing))


def test_a_call_of_any_device_function_the_runtime_lacks_is_refused_by_name(spec, tmp_path):
    _, missing = spec
    assert missing, "every name is declared: refusals have nothing left to test"
    body = "".join(f"    (void){name};\n" for name in missing)
    (tmp_path / "calls.cu").write_text(f"__global__ void k() {{\n{body}}}\nint main() {{ return 0; }}\n")
    with pytest.raises(cuda_build.NotEmulated) as refused:
        cuda_build.build_program(tmp_path, ["calls.cu"])
    said = str(refused.value)
    assert "was not declared" not in said
    unnamed = [n for n in missing if f"{n} is a CUDA device function that the CPU runtime does not emulate yet" not in
               said]
    assert unnamed == []
    line = missing.index(missing[-1]) + 2
    assert f"(your line {line} of calls.cu: (void){missing[-1]};)" in said


EXAMPLE = re.compile(r"\* - (?P<name>\w+)\((?P<args>[^()]*)\) returns \\?p? ?(?P<value>[-+]?(?:0x[0-9a-fA-F]+|\d+))U?\.?\s*$",
                     re.M)
ARGUMENT = re.compile(r"^(0x[0-9a-fA-F]+U?|\d+U?|NaN)$")
HALF_MATH = re.compile(r"^h2?[a-z]")


def header_examples(names):
    """(call, expected integer) of each worked example in the pinned nvcc's headers (`* - f(args) returns v.`) whose
    arguments are integer literals or NaN and whose result is an integer, for a function of the spec."""
    include = nvcc.PINNED / "include"
    found = {}
    for header in sorted(include.rglob("*.h*")):
        for m in EXAMPLE.finditer(header.read_text(errors="replace")):
            args = [a.strip() for a in m.group("args").split(",")]
            # (hlog(1) means a half 1: an int would be ambiguous between __half and __nv_bfloat16, as under nvcc)
            if m.group("name") in names and all(ARGUMENT.match(a) for a in args) and not HALF_MATH.match(m.group("name")):
                found[f"{m.group('name')}({', '.join(args)})"] = int(m.group("value"), 0)
    return found


def _c_argument(name, arg):
    """A header's argument as C++: NaN as the type the function converts from (its name says which)."""
    if arg != "NaN":
        return arg
    if name.startswith("__half2"):
        return "__ushort_as_half(0x7e00)"
    if name.startswith("__bfloat162"):
        return "__ushort_as_bfloat16(0x7fc0)"
    return 'nanf("")'


def test_the_worked_examples_in_cuda_s_headers_give_the_documented_results(spec, tmp_path):
    """NVIDIA's own examples, read from the installed headers (never copied here): each declared function's call
    in them gives the value they document (SIMD intrinsics, conversions of NaN, ...)."""
    names, missing = spec
    examples = header_examples(set(names) - set(missing))
    assert len(examples) >= 60, examples
    calls = []
    for call in examples:
        name, _, args = call.partition("(")
        calls.append(f"{name}({', '.join(_c_argument(name, a.strip()) for a in args[:-1].split(','))})")
    body = "".join(f'    printf("%llx\\n", (unsigned long long)({c}));\n' for c in calls)
    (tmp_path / "examples.cu").write_text("#include <cmath>\n#include <cstdio>\n#include <cuda_bf16.h>\n"
                                           f"#include <cuda_fp16.h>\nint main() {{\n{body}    return 0;\n}}\n")
    import subprocess
    program = cuda_build.build_program(tmp_path, ["examples.cu"])
    got = subprocess.run([str(program)], capture_output=True, text=True, timeout=60).stdout.split()
    width = {c: 64 if re.search(r"ll_|ull_", c) else 32 for c in examples}
    wrong = [f"{c}: got 0x{g} vs expected {v:#x}" for (c, v), g in zip(examples.items(), got)
             if int(g, 16) & ((1 << width[c]) - 1) != v & ((1 << width[c]) - 1)]
    assert len(got) == len(examples) and wrong == [], "\n".join(wrong[:10])
