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
    assert not [n for n in names if device_api.INTERNAL.match(n) or n in device_api.KEYWORDS]


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
