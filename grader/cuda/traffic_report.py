"""The kernel report's memory section, from a kernel file's profiled runs (grader/cuda/profile.py): a table per
kernel beside the reference's two versions (requests, sectors and wavefronts a request, active lanes, occupancy), a
lower bound on the GPU the runtime stands for, the costliest lines in the student's terms, and the roofline
picture's data (grader/report/roofline_picture.py). Ungraded: it never changes a score."""

from pathlib import Path

from rich.cells import cell_len

from grader.common.i18n import N_, _
from grader.cuda.profile import RUNS, TARGET, measure, ratio


def bound(measured, gpu):
    """(seconds, what binds, {what: seconds}) at the measurement's shape: the longest of the arithmetic at the FP32
    peak, the compulsory bytes at DRAM bandwidth, and the counted traffic through the SMs' L1."""
    from grader.cuda import roofline
    shape = measured.counts()[1]
    parts = {roofline.ARITHMETIC: roofline.flops(shape) / gpu.fp32_flops,
             roofline.DRAM: roofline.compulsory_bytes(shape) / gpu.memory_bandwidth,
             roofline.L1: measured.l1_seconds(gpu)}
    binding = max(parts, key=parts.get)
    return parts[binding], binding, parts


def _shape_words(shape):
    return "x".join(map(str, shape))


# the table's columns and widths in terminal cells (a CJK character takes two): it fits the scorecard's 110
COLUMNS = ((N_("kernel"), 30), ("global", 7), ("sect/req", 8), ("ideal", 5), ("shared", 7), ("wavefr/req", 10),
           ("lanes", 5), (N_("occupancy"), 20))


def _pad(text, width, left=False):
    room = " " * max(0, width - cell_len(text))
    return text + room if left else room + text


def _cells(values):
    first, *rest = values
    return "  " + _pad(first, COLUMNS[0][1], left=True) + "".join(
        " " + _pad(v, w) for v, (_name, w) in zip(rest, COLUMNS[1:]))


def _number(n):
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.0f}k" if n >= 1e4 else str(n)


def table_rows(label, measured):
    """A row per kernel: its requests and what they cost per request, the lanes active, the occupancy."""
    counts = measured.counts()[0]
    rows = []
    for kernel, t in counts.items():
        rows.append(_cells([
            f"{_(label)} {kernel}",
            _number(t["global requests"]) if t["global requests"] else "-",
            f"{ratio(t['sectors'], t['global requests']):.1f}" if t["global requests"] else "-",
            f"{ratio(t['ideal sectors'], t['global requests']):.1f}" if t["global requests"] else "",
            _number(t["shared requests"]) if t["shared requests"] else "-",
            f"{ratio(t['wavefronts'], t['shared requests']):.1f}" if t["shared requests"] else "-",
            f"{ratio(t['lanes'], t['requests']):.1f}",
            measured.occupancy.get(kernel, "?")]))
    return rows


def bound_words(label, measured, gpu):
    seconds, binding, parts = bound(measured, gpu)
    each = ", ".join(f"{_(what)} {s * 1e6:.1f}" for what, s in parts.items())
    moved = measured.l1_bytes()
    from grader.cuda import roofline
    shape = measured.counts()[1]
    return "  " + _("{label}: at least {micro} µs, bound by {binding} ({each} µs); {mb} MB of L1 bandwidth used (a "
                    "sector counts 32 bytes, a shared wavefront 128), {times}x the bytes the problem must move").format(
        label=_(label), micro=f"{seconds * 1e6:.1f}", binding=_(binding), each=each, mb=f"{moved / 1e6:.0f}",
        times=f"{moved / roofline.compulsory_bytes(shape):.0f}")


def advice(site):
    """What is wrong with one costly instruction, in the student's terms."""
    where = (_("line {number}").format(number=site.line.rpartition(":")[2]) if site.line
             else _("an instruction of {kernel}").format(kernel=site.kernel))
    if site.code:
        where += f" ({site.code})"
    load = site.kind == "load"
    if site.stride:
        apart = (_("consecutive threads read addresses {bytes} bytes apart") if load
                 else _("consecutive threads write addresses {bytes} bytes apart")).format(bytes=abs(site.stride))
    else:
        apart = _("the warp's lanes touch addresses far apart")
    per = ratio(site.cost, site.requests)
    if site.space == "global":
        ideal = ratio(site.ideal, site.requests)
        fix = (_("let consecutive threads read consecutive floats (or stage the data in shared memory)") if load
               else _("let consecutive threads write consecutive floats (or stage the data in shared memory)"))
        return _("{where}: {apart}, {per} sectors a request where {ideal} would do; {fix}").format(
            where=where, apart=apart, per=f"{per:.1f}", ideal=f"{ideal:.1f}", fix=fix)
    return _("{where}: {apart}, {per} wavefronts a request (a {ways}-way bank conflict); pad each row by one float "
             "(tile[N][M + 1]) or let consecutive threads take consecutive words").format(
        where=where, apart=apart, per=f"{per:.1f}", ways=round(per))


def costliest(sites, n=3):
    """The n instructions that waste most (cost above their ideal), worst first."""
    wasteful = [s for s in sites if s.waste > 0 and ratio(s.cost, s.ideal) >= 1.5]
    return sorted(wasteful, key=lambda s: -s.waste)[:n]


YOURS = N_("yours")
LABELS = {2: N_("tiled ref."), 1: N_("lesson's")}  # the reference's versions, as the table names them (in English:
# the label is also the roofline picture's key; _() where it is shown)


def measured_versions(source_path, reference=None):
    """[(label, Measurement)]: the student's file, then the reference's two versions where the reference is here."""
    out = [(YOURS, measure(source_path))]
    if reference is not None and Path(reference).is_file():
        out += [(LABELS[v], measure(reference, defines=[f"MICROGPT_VERSION={v}"])) for v in (2, 1)]
    return out


def report(source_path, reference=None, versions=None):
    """The kernel report's memory section: a table of the student's kernels and each reference version's, the lower
    bound of each on the GPU the runtime stands for, and the costliest lines of the student's file."""
    from grader.cuda import gpus
    gpu = gpus.chosen()
    versions = versions or measured_versions(source_path, reference)
    mine = versions[0][1]
    shape, why = mine.counts()[1:]
    if why is None:
        how = _("counted from every access of profiled runs at {first} to {last} and scaled exactly to {target} (each "
                "count grew as heads x a quadratic in T)").format(first=_shape_words(RUNS[0]),
                                                                   last=_shape_words(RUNS[-1]),
                                                                   target=_shape_words(TARGET))
    else:
        how = _("counted from every access of a profiled run at {shape} (not scaled: {why})").format(
            shape=_shape_words(shape), why=why)
    text = [_("memory traffic, what Nsight Compute counts on a GPU, {how}; the tiled reference and the lesson's four "
              "kernels beside yours:").format(how=how), _cells([_(c) for c, _w in COLUMNS])]
    for label, measured in versions:
        text += table_rows(label, measured)
    uncounted = any("*" in o for _label, m in versions for o in m.occupancy.values())
    text.append("  (" + _("global, shared: load and store requests of a warp; sect/req: 32-byte sectors a global "
                          "request, 4 for 32 consecutive floats, 32 the worst, ideal: the fewest sectors holding the "
                          "same bytes; wavefr/req: 1 is ideal, N for an N-way bank conflict; lanes: of 32, active a "
                          "request; occupancy on the {gpu} and what limits it").format(gpu=gpu.name)
                + ("; " + _("* registers not counted: no nvcc here") if uncounted else "") + ")")
    text.append(_("lower bounds on the {gpu} (not predictions: the longest of the problem's FLOPs at the FP32 peak, "
                  "its compulsory bytes at DRAM bandwidth, and the counted traffic through the SMs' L1 at one 128-byte "
                  "wavefront a clock, all SMs busy; caches, latency and idle warps only add):").format(gpu=gpu.name))
    text += [bound_words(label, measured, gpu) for label, measured in versions]
    worst = costliest(mine.largest.sites)
    source_lines = Path(source_path).read_text(errors="replace").splitlines()
    for s in worst:  # the student's own code, as they wrote it
        number = s.line.rpartition(":")[2]
        if number.isdigit() and 0 < int(number) <= len(source_lines):
            s.code = " ".join(source_lines[int(number) - 1].split())[:100]
    if worst:
        text.append(_("costliest lines of yours: {lines}").format(lines="; ".join(advice(s) for s in worst)))
    return "\n".join(text)


def roofline_points(versions, gpu):
    """For the picture: {label: {"intensity": FLOP per L1 byte, "bound_s": seconds, "binding": what}} and the
    roofs, as plain data (records.add_data)."""
    from grader.cuda import roofline
    points = {}
    for label, measured in versions:
        seconds, binding = bound(measured, gpu)[:2]
        shape = measured.counts()[1]
        points[label] = {"flops": roofline.flops(shape), "l1_bytes": measured.l1_bytes(), "bound_s": seconds,
                         "binding": binding, "shape": list(shape)}
    shape = versions[0][1].counts()[1]
    return {"gpu": gpu.name, "fp32_flops": gpu.fp32_flops, "dram_bandwidth": gpu.memory_bandwidth,
            "compulsory_bytes": roofline.compulsory_bytes(shape),
            "l1_bandwidth": 128 * gpu.sms * gpu.clock_khz * 1e3, "points": points}
