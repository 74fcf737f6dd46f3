"""How long one run of a student's kernel may take: never so short that a correct kernel fails for being slow,
never so long that a kernel that never ends costs minutes.

A run may take LIMIT_TIMES times what the lesson's kernel (version 1 of solutions/microgpt_cuda.cu: the four
plain kernels, no tiles, no barriers) takes on this machine for the same work, B*H x T x T x d_k, and at least
LIMIT_FLOOR seconds (starting a worker and a small grid's fibers). The lesson's time is measured at the ANDREA-120M
shape once per machine, runtime and number of block workers (kernel_report.reference_seconds, cached under the
kernel cache), and scaled by each test's work; a test with twice the work (24 heads at T=1024) gets twice the time.

Where the reference is absent (the student repository ships none), the lesson's time is taken as
UNCALIBRATED_ANDREA_SECONDS, about twice its time on the 2 busy cores of the machine it was measured on.
"""

import os
from dataclasses import dataclass

from grader.common.i18n import _

ANDREA_SHAPE = (12, 1024, 64)  # BH, T, d_k of ANDREA-120M: where the lesson's kernel is timed
# a correct kernel with ~100 barriers per block (solutions/right/barrier_heavy_flash.cu) took 7.4x the lesson's
# kernel at ANDREA-120M on the 2-core machine under load; 30x leaves room for a grading busier than the calibration
LIMIT_TIMES = 30
LIMIT_FLOOR = 5.0  # seconds: any run, however small (the lesson's kernel takes milliseconds at T = 1, the
# barrier-heavy positive control 1 s at the floor's largest work here); the Python calls' floor too
UNCALIBRATED_ANDREA_SECONDS = 10.0  # no reference to time: about twice the 4.4 s it took on 2 busy cores


def work(shape):
    """B*H x T x T x d_k of a (BH, T, d_k) input: what the lesson's kernel's time grows with."""
    bh, t, d_k = shape
    return bh * t * t * d_k


@dataclass(frozen=True)
class Limit:
    """The limit of one run: seconds, and the lesson kernel's time for the same work (measured or assumed)."""
    seconds: float
    lesson_seconds: float
    assumed: str = ""  # why the lesson's time was not measured here (UNCALIBRATED_ANDREA_SECONDS taken instead)

    @property
    def at_floor(self):
        return self.seconds <= LIMIT_FLOOR

    def words(self, shape):
        """Why a run that exceeded this limit was stopped, for the student (after "timed out after N s")."""
        where = _("(assumed: {why})").format(why=self.assumed) if self.assumed else _("on this machine")
        shape_words = "x".join(map(str, shape))
        if self.at_floor:  # the shortest limit: LIMIT_TIMES x the lesson's time is less than that
            return _("never finished: at {shape} the lesson's kernel needs under {seconds} s {where}. A kernel that "
                     "never ends: a loop whose condition never turns false (a step of 0?), threads spinning on a flag "
                     "no thread sets, a barrier some threads never reach").format(
                shape=shape_words, seconds=f"{self.seconds / LIMIT_TIMES:.2g}", where=where)
        return _("slower than {times} x the lesson's kernel: the lesson's kernel takes {seconds} s at {shape} {where}. "
                 "If it never ends at all, look for a loop whose condition never turns false").format(
            times=LIMIT_TIMES, seconds=f"{self.lesson_seconds:.2g}", shape=shape_words, where=where)


def lesson_seconds_at_andrea():
    """(seconds, why assumed): the lesson's kernel at ANDREA-120M on this machine, measured once (cached) and why
    not ("" when measured), or UNCALIBRATED_ANDREA_SECONDS and why."""
    import numpy as np
    from grader.cuda import kernel_report
    from grader.common.layout import REFERENCE_KERNEL
    try:
        here = REFERENCE_KERNEL.is_file() and os.access(REFERENCE_KERNEL, os.R_OK)
    except OSError:  # a folder this user may not enter: the instructor's solutions/, graded as another user
        here = False
    if not here:
        return UNCALIBRATED_ANDREA_SECONDS, "there is no reference kernel here that this user may read and time"
    Q = np.zeros(ANDREA_SHAPE, np.float32)  # its time depends on the shape only (the cache is keyed by it)
    try:
        return kernel_report.reference_seconds(Q, Q, Q)[1], ""
    except Exception as exc:  # the grade must not depend on it: the assumed figure, and why
        return UNCALIBRATED_ANDREA_SECONDS, f"the reference kernel could not be timed: {exc}"


def for_shape(shape, andrea=None):
    """The Limit for a run on a (BH, T, d_k) input; andrea: lesson_seconds_at_andrea()'s answer, when known."""
    seconds, assumed = andrea or lesson_seconds_at_andrea()
    lesson = seconds * work(shape) / work(ANDREA_SHAPE)
    return Limit(round(max(LIMIT_FLOOR, LIMIT_TIMES * lesson), 1), lesson, assumed)
