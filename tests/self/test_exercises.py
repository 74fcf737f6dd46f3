"""exercises/ is generated from solutions/ (the single source of truth) and must stay in step."""

import pytest

from grader.course import make_exercises
from grader.course.solution_regions import MarkerError, clear, stub_for


def test_committed_exercises_match_generated():
    for reference, target in make_exercises.GENERATED:
        assert target.read_text() == make_exercises.render(reference), (
            f"{target.name} differs from what `make exercises` generates from {reference.name}: run `make exercises`")


def test_stubs_keep_signatures_and_docstrings_but_no_solution():
    for reference, target in make_exercises.GENERATED[:1]:
        text = target.read_text()
        assert "SOLUTION" not in text
        assert "np.triu" not in text and "np.exp" not in text and "swapaxes(K" not in text
        for name in ("compute_dk", "scale_scores", "apply_causal_mask", "row_softmax", "weighted_sum"):
            assert f"def {name}(" in text
        assert text.count("raise NotImplementedError()") == 5
        assert "def causal_attention(Q, K, V):" in text and "weighted_sum(A, V)" in text  # ships complete


def test_clear_solutions_keeps_indentation():
    src = "def f():\n    x = 1\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n"
    assert clear(src, stub_for(".py")) == "def f():\n    x = 1\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"


@pytest.mark.parametrize("src, line", [
    ("x = 1\n### BEGIN SOLUTION\nx\n", "<source>:2: BEGIN SOLUTION is never closed"),
    ("### END SOLUTION\n", "<source>:1: END SOLUTION without"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n", "<source>:2: BEGIN SOLUTION inside the region begun on line 1"),
    ("void f() {\n  // BEGIN SOLUTION\n}\n", "<source>:2: BEGIN SOLUTION is never closed"),
])
def test_clear_solutions_rejects_bad_markers_with_their_line(src, line):
    with pytest.raises(MarkerError, match=line):
        clear(src, stub_for(".py"))


def test_a_line_that_only_mentions_the_markers_is_code():
    src = 'BEGIN, END = "BEGIN SOLUTION", "END SOLUTION"\n'
    assert clear(src, stub_for(".py")) == src


def test_kernel_stub_keeps_entry_point_and_kernels_but_no_solution():
    text = (make_exercises.ROOT / "csrc" / "microgpt_cuda.cu").read_text()
    assert "SOLUTION" not in text and "expf(" not in text and "<<<" not in text
    assert 'extern "C" void causal_attention_forward(const float* Q, const float* K, const float* V, float* O,' in text
    assert "scores[i][j] = dot(Q[i], K[j]) * (1.0f / sqrtf(d_k))" in text  # the lesson's seed line
    for kernel in ("scores_kernel", "mask_kernel", "softmax_kernel", "weighted_sum_kernel", "flash_kernel"):
        assert f"__global__ void {kernel}(" in text
    assert text.count("    // YOUR CODE HERE\n") == 6  # five kernels and the launcher
