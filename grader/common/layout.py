"""Where things are and what they are called, written once: the repository root, the graded exercises in the
scorecard's order, the files a submission holds, the graded suites and the public seed.

Standard library only, so the class-level commands (batch, autograde), which only name exercises, start without
importing pytest and torch.
"""

from pathlib import Path

from grader.common import settings

ROOT = Path(__file__).resolve().parents[2]  # the repository (or student copy) the grader runs from
# where the grader's caches go (built kernels, the machine's expected answers): GRADER_CACHE_DIR moves them (the
# notebook keeps the student's folder clean)
CACHE_ROOT = Path(settings.CACHE_DIR.get()) if settings.CACHE_DIR.get() else ROOT / "build"

STUDENT_FUNCTIONS = ("compute_dk", "scale_scores", "apply_causal_mask", "row_softmax", "weighted_sum")
GIVEN_FUNCTIONS = ("causal_attention",)  # complete in the reference and in the stubs: it chains the four
KERNEL_EXERCISE = "cuda_kernel"
EXERCISES = (*STUDENT_FUNCTIONS, *GIVEN_FUNCTIONS, KERNEL_EXERCISE)

SUBMISSION_FILE = "attention.py"
KERNEL_FILE = "microgpt_cuda.cu"
REFERENCE = ROOT / "solutions" / SUBMISSION_FILE  # the references: the single source of truth
REFERENCE_KERNEL = ROOT / "solutions" / KERNEL_FILE

SUITE_PATHS = {"public": "tests/public", "hidden": "tests/hidden"}
SUITES = {"public": ("public",), "hidden": ("hidden",), "all": ("public", "hidden")}  # --suite choices

PUBLIC_SEED = 20171206  # the day "Attention Is All You Need" was presented at NeurIPS


def exercise_of_test_file(path):
    """The exercise a graded suite's test file is for, from its name (test_EXERCISE.py, test_hidden_EXERCISE.py);
    None for any other file."""
    name = Path(path).stem.removeprefix("test_").removeprefix("hidden_")
    return name if Path(path).name.startswith("test_") and name in EXERCISES else None


def suite_of(path):
    """The suite ("public", "hidden") whose folder (SUITE_PATHS) holds path, or None."""
    path = Path(path).resolve()
    return next((name for name, folder in SUITE_PATHS.items() if path.is_relative_to((ROOT / folder).resolve())), None)


def suite_paths(suite):
    """The folders of a --suite choice, under ROOT."""
    return [ROOT / SUITE_PATHS[s] for s in SUITES[suite]]
