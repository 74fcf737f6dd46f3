"""The rewrite of a student's CUDA file for g++ and the CPU runtime (csrc/cuda_cpu).

It keeps every line where it was (and starts with `#line 1 "<file>"`), so g++'s messages name the student's own
file and line. It changes only what no header can express:
    kernel<<<grid, block[, shmem[, stream]]>>>(args)
        ->  cuda_cpu::launch(CUDA_CPU_KERNEL(kernel), cuda_cpu::config(grid, block...), args)
    __shared__ float tile[64][65];  ->  auto& tile = cuda_cpu::shared_var<float[64][65]>(<site>, "tile", __LINE__);
    extern __shared__ float dyn[];  ->  float* dyn = cuda_cpu::dynamic_shared<float>("dyn");
never_wait() finds the kernels that reach no barrier, which the runtime runs without a fiber each.
"""

import re

_DYNAMIC_SHARED = re.compile(
    r"\bextern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?([A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)*?)\s+([A-Za-z_]\w*)\s*\[\s*\]\s*;")
# the same with the qualifier after the type: `extern float __shared__ smem[];`
_DYNAMIC_SHARED_AFTER = re.compile(
    r"\bextern\s+([A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)*?)\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?([A-Za-z_]\w*)\s*\[\s*\]\s*;")
# the type may be a template's (`cg::block_tile_memory<256>`, `Pair<float, int>`)
# and one declaration may declare several variables, arrays and pointers (`__shared__ int a, b[4], *p;`)
_DECLARATOR = r"(\**)\s*([A-Za-z_]\w*)\s*((?:\[[^\]\n]*\]\s*)*)"
_ONE_DECLARATOR = r"\**\s*[A-Za-z_]\w*\s*(?:\[[^\]\n]*\]\s*)*"
_STATIC_SHARED = re.compile(
    r"(?<![\w])__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?([A-Za-z_][\w:]*(?:\s*<[^<>;{}()]*>)?(?:\s+[A-Za-z_]\w*)*?)"
    rf"\s*({_ONE_DECLARATOR}(?:,\s*{_ONE_DECLARATOR})*);")
_LAUNCH = re.compile(r"([A-Za-z_][\w:]*(?:\s*<[^<>;()]*>)?)\s*<<<(.*?)>>>\s*\(\s*(\))?", re.S)


def _keep_lines(match_text, replacement):
    """Pad a one-line replacement with the newlines its match spanned, so later lines keep their numbers."""
    return replacement + "\n" * match_text.count("\n")


# what makes a thread wait for others (or, __activemask, look at its warp's lanes): such kernels run with fibers
# (cooperative groups: a group's sync, shuffles and votes, cg::reduce, and whatever makes a group at all)
_BLOCKING = re.compile(r"\b(__syncthreads(?:_count|_and|_or)?|__syncwarp|__shfl\w*_sync|__ballot_sync|__any_sync"
                       r"|__all_sync|__activemask|__reduce_\w+_sync|__match_\w+_sync"
                       r"|this_thread_block|tiled_partition|thread_block_tile|coalesced_threads|this_grid)\b"
                       r"|\bsync\s*\(|\.(?:shfl\w*|ballot|any|all)\s*\(|\breduce\s*\(")
_GLOBAL = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+([A-Za-z_]\w*)\s*\(")


def _function_bodies(source, pattern):
    """(name, body text) of each function whose header matches pattern, found by brace matching."""
    for m in pattern.finditer(source):
        start = source.find("{", m.end())
        if start < 0:
            continue
        depth, i = 0, start
        while i < len(source):
            depth += {"{": 1, "}": -1}.get(source[i], 0)
            if depth == 0:
                break
            i += 1
        yield m.group(1), source[start:i + 1]


_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)((?:[^\n]*\\\n)*[^\n]*)", re.M)


def _blocking(source):
    """A pattern for what can wait: the CUDA calls, and every macro whose expansion reaches one (transitively:
    `#define BLOCK_SYNC() __syncthreads()`, or a macro built on that one)."""
    names, macros = set(), {m.group(1): m.group(2) for m in _DEFINE.finditer(source)}
    while True:
        pattern = _BLOCKING if not names else re.compile(_BLOCKING.pattern + r"|\b(" + "|".join(sorted(names)) + r")\b")
        more = {name for name, body in macros.items() if name not in names and pattern.search(body)}
        if not more:
            return pattern
        names |= more


def never_wait(source, context=""):
    """Kernels whose threads can never wait (no barrier or warp collective in the kernel, nor in any __device__
    function of the file or of `context` (the program's other files), nor behind a macro): the runtime runs their
    threads one after another with no fibers."""
    blocking = _blocking(source + "\n" + context)
    device_code = "".join(body for _, body in _function_bodies(source + "\n" + context,
                                                               re.compile(r"__device__[^;{(]*?(\w+)\s*\(")))
    if blocking.search(device_code):
        return set()
    return {name for name, body in _function_bodies(source, _GLOBAL) if not blocking.search(body)}


_LITERAL = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def _sub_in_code(pattern, replace, text):
    """pattern.sub(replace, text) in code only: comments and string literals are matched as blanks (so a
    `kernel<<<>>>` in a comment or a message is left alone, and never starts a match that runs into the code)."""
    masked = _LITERAL.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    out, last = [], 0
    for m in pattern.finditer(masked):
        out += [text[last:m.start()], replace(m)]
        last = m.end()
    return "".join(out) + text[last:]


def rewrite(source, filename, context=""):
    def dynamic(m):
        return _keep_lines(m.group(0), f'{m.group(1)}* {m.group(2)} = cuda_cpu::dynamic_shared<{m.group(1)}>("{m.group(2)}");')

    def static(m):
        # the site: a static inside a lambda has one address per declaration and per template instantiation,
        # as each instantiation of a function template has its own __shared__ arrays on a GPU
        site = "[] { static const char site = 0; return &site; }()"
        variables = []
        for stars, name, dims in re.findall(_DECLARATOR, m.group(2)):
            dims = re.sub(r"\s+", "", dims)
            variables.append(f'auto& {name} = cuda_cpu::shared_var<{m.group(1)}{stars}{dims}>({site}, "{name}", __LINE__);')
        return _keep_lines(m.group(0), " ".join(variables))

    simple = never_wait(source, context)

    def launch(m):
        config = " ".join(m.group(2).split())
        tail = ")" if m.group(3) else ", "
        kind = "launch_never_waits" if m.group(1).split("<")[0].strip() in simple else "launch"
        return _keep_lines(m.group(0), f"cuda_cpu::{kind}(CUDA_CPU_KERNEL({m.group(1)}), cuda_cpu::config({config}){tail}")

    text = source
    for pattern, replace in ((_DYNAMIC_SHARED, dynamic), (_DYNAMIC_SHARED_AFTER, dynamic), (_STATIC_SHARED, static),
                             (_LAUNCH, launch)):
        text = _sub_in_code(pattern, replace, text)
    return f'#line 1 "{filename}"\n' + text
