"""A submission's CUDA kernel as the suites meet it: its file, built once for the CPU runtime on the first kernel
test and run in a worker of its own (every grade comes from there), its time limits, the runs that already timed
out, and, where an NVIDIA GPU and nvcc exist, a device build for the ungraded "on the GPU too" comparison."""

import time
from pathlib import Path

from grader.common.failures import BuildFailed, Missing, NotGradable, TimedOut
from grader.common.i18n import _
from grader.common.layout import KERNEL_FILE, ROOT
from grader.sandbox.client import Submission


def kernel_source(folder):
    """The CUDA file graded with a submission folder: its own, or csrc/'s when grading exercises/."""
    folder = Path(folder)
    if (folder / KERNEL_FILE).is_file() or folder != ROOT / "exercises":
        return folder / KERNEL_FILE
    return ROOT / "csrc" / KERNEL_FILE


class KernelUnderTest:
    """A submission's CUDA file: built once for the CPU runtime (on the first kernel test), then run in its own
    worker; every grade comes from there, on every machine. Where an NVIDIA GPU and nvcc exist, gpu() builds it for
    the device too, for the timing report and an ungraded "on the GPU too" comparison."""

    def __init__(self, folder, timeout):
        self.source, self.timeout = kernel_source(folder), timeout
        self._runner = self._problem = None
        self.timed_out = None  # (work, case, words) of the smallest run that ran past its limit
        self._andrea = None  # the lesson's kernel's time at ANDREA-120M here (time_limits.lesson_seconds_at_andrea)
        self.build_seconds = None
        self.threads = None  # how its kernels that wait may run (grader/cuda/thread_kinds.py), once built
        self._gpu = None  # (Submission or None, why not): the device build, once asked for

    def time_limit(self, Q):
        """The Limit of one run on Q (grader/cuda/time_limits.py): a multiple of the lesson's kernel's time for the
        same work on this machine, measured once per machine and kept for the whole grading."""
        from grader.cuda import time_limits
        if self._andrea is None:
            self._andrea = time_limits.lesson_seconds_at_andrea()
        return time_limits.for_shape(Q.shape, self._andrea)

    def check_not_timed_out(self, Q):
        """Refuse at once a run with at least the work of one that already ran past its limit: it would too, and a
        kernel that never ends then costs one limit, not one per test. Smaller runs still run."""
        from grader.cuda import time_limits
        if self.timed_out is not None and time_limits.work(Q.shape) >= self.timed_out[0]:
            raise TimedOut(_("not run: on {case} (less work than this test) the kernel {what}").format(
                case=self.timed_out[1], what=self.timed_out[2]))

    def record_timeout(self, Q, what, words):
        """A run on Q (the case `what`) timed out; words: how, "timed out after N s while ...; why"."""
        from grader.cuda import time_limits
        work = time_limits.work(Q.shape)
        if self.timed_out is None or work < self.timed_out[0]:
            self.timed_out = (work, what, words)

    def runner(self):
        from grader.cuda import build as cuda_build  # the kernel's build step, only when a kernel test runs
        if self._runner is None and self._problem is None:
            if not self.source.is_file():
                self._problem = Missing(_("no {file} in {folder}: add your {file} there").format(
                    file=KERNEL_FILE, folder=self.source.parent))
            else:
                try:
                    started = time.perf_counter()
                    from grader.cuda import resources  # with nvcc's register counts, for the launch checks
                    lib, self.resources_checked = resources.build_counted(self.source)
                    from grader.cuda import thread_kinds
                    self.threads = thread_kinds.threads_of(lib)
                    self.build_seconds = time.perf_counter() - started
                    self._runner = Submission(self.source.parent, timeout=self.timeout, kernel_library=lib)
                except cuda_build.MissingToolchain as exc:
                    self._problem = NotGradable(_("the kernel cannot be graded on this machine: {why}").format(why=exc))
                except cuda_build.NotEmulated as exc:  # valid CUDA, maybe: what the CPU runtime lacks
                    self._problem = BuildFailed(_("{file} cannot run on the CPU runtime:").format(file=KERNEL_FILE)
                                                + f"\n{exc}")
                except cuda_build.BuildError as exc:
                    self._problem = BuildFailed(_("{file} does not compile:").format(file=KERNEL_FILE) + f"\n{exc}")
        if self._problem:
            raise type(self._problem)(str(self._problem))  # a fresh exception per test: pytest keeps each one
        return self._runner

    def gpu(self):
        """(a worker running the kernel on the GPU, "") where nvcc and an NVIDIA GPU exist (GRADER_KERNEL_DEVICE),
        else (None, why not: "" when there is simply no GPU). Never graded."""
        from grader.cuda import build as cuda_build, nvcc
        if self._gpu is None:
            try:
                self._gpu = (None, "")
                if nvcc.gpu_present():
                    self._gpu = (Submission(self.source.parent, timeout=self.timeout,
                                            kernel_library=nvcc.build_gpu(self.source), kernel_device="gpu"), "")
            except cuda_build.BuildError as exc:  # MissingToolchain too (GRADER_KERNEL_DEVICE=gpu, no GPU)
                self._gpu = (None, str(exc))
        return self._gpu

    def close(self):
        if self._runner is not None:
            self._runner.close()
        if self._gpu is not None and self._gpu[0] is not None:
            self._gpu[0].close()
