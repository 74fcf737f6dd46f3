"""The one-unit rule of the CPU runtime, checked on what the compiler made of it.

csrc/cuda_cpu/runtime.ninja compiles every source of csrc/cuda_cpu/src as one translation unit. Two files that
define the same name at file scope (in an anonymous namespace, or static) then share it: the compiler stops at
most such clashes, but not at two functions of one name whose parameters differ, which become overloads, and a
call in one file may quietly take the other file's. The compiler's debug information (the runtime is built with
-g) says where each name was declared, inlined or not: this reads it with binutils' readelf and names every
file-scope name that two sources declare.
"""

import re
import subprocess
from collections import defaultdict
from pathlib import Path

_DIE = re.compile(r"^ <(\d+)><[0-9a-f]+>: Abbrev Number: \d+ \((DW_TAG_\w+)\)")
_ATTR = re.compile(r"^ +<[0-9a-f]+> +(DW_AT_\w+) *: (.*)$")
_FILE = re.compile(r"^  (\d+)\t(\d+)\t(?:\(indirect line string, offset: 0x[0-9a-f]+\): )?(.+)$")
_NAMED = ("DW_TAG_subprogram", "DW_TAG_variable")
_SCOPES = ("DW_TAG_compile_unit", "DW_TAG_namespace")


def _readelf(obj, dump):
    out = subprocess.run(["readelf", f"--debug-dump={dump}", str(obj)], capture_output=True, text=True)
    return out.stdout


def _file_names(obj):
    """{decl_file number: file name} from the line table's file name table (DWARF 5: numbered from 0)."""
    names, in_table = {}, False
    for line in _readelf(obj, "line").splitlines():
        if line.startswith(" The File Name Table"):
            in_table = True
        elif in_table:
            m = _FILE.match(line)
            if m:
                names[int(m.group(1))] = Path(m.group(3).strip()).name
            elif names:
                break
    return names


def _value(text):
    """An attribute's value without readelf's "(indirect string, offset: ...): " prefix."""
    return text.rsplit("): ", 1)[-1].strip()


def declarations(obj):
    """(name, decl_file number, decl_line) of every function and variable declared at file scope with internal
    linkage: inside an anonymous namespace, or not external."""
    found, stack = [], []  # stack: [tag, {attr: value}] per depth

    def close(die):
        tag, attrs = die
        scopes = stack[:-1]
        if tag not in _NAMED or "DW_AT_name" not in attrs or "DW_AT_decl_file" not in attrs:
            return
        if not scopes or any(t not in _SCOPES for t, _a in scopes):
            return  # a member, a local, a parameter
        anonymous = any(t == "DW_TAG_namespace" and "DW_AT_name" not in a for t, a in scopes)
        if anonymous or "DW_AT_external" not in attrs:
            found.append((_value(attrs["DW_AT_name"]), int(_value(attrs["DW_AT_decl_file"])),
                          int(_value(attrs.get("DW_AT_decl_line", "0")))))

    for line in _readelf(obj, "info").splitlines():
        m = _DIE.match(line)
        if m:
            depth = int(m.group(1))
            while len(stack) > depth:  # the DIEs at this depth and deeper are complete
                close(stack[-1])
                stack.pop()
            stack.append([m.group(2), {}])
            continue
        m = _ATTR.match(line)
        if m and stack:
            stack[-1][1][m.group(1)] = m.group(2)
    while stack:
        close(stack[-1])
        stack.pop()
    return found


def clashes(obj, sources):
    """What two files of the folder `sources` both declare at file scope, as "NAME: a.cpp:12 and b.cpp:40"; []
    where nothing clashes (or readelf is missing: the compiler's own errors remain)."""
    try:
        names = _file_names(obj)
        found = declarations(obj)
    except FileNotFoundError:
        return []
    ours = {p.name for p in Path(sources).iterdir()}
    where = defaultdict(dict)  # name -> {file: line}
    for name, number, line in found:
        file = names.get(number)
        if file in ours:
            where[name].setdefault(file, line)
    return [f"{name}: " + " and ".join(f"{f}:{n}" for f, n in sorted(places.items()))
            for name, places in sorted(where.items()) if len(places) > 1]
