"""What a wrong answer's message and hints compare it with, made without the oracle's torch (grader/judge/
known_mistakes.py, compare.masked_scores): equal to the oracle's own, and a wrong answer graded where every graded
answer was made ahead (Gradescope's image) imports no torch."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from grader.judge import known_mistakes, oracle
from grader.judge.compare import masked_scores
from helpers import ROOT


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (17, 17), (2, 3, 64, 64)])
def test_the_masked_scores_are_the_oracle_s_value_for_value(shape, dtype):
    scores = np.random.default_rng(5).standard_normal(shape).astype(dtype) * 30
    mine = masked_scores(scores)
    assert mine.dtype == scores.dtype and np.array_equal(mine.astype(np.float64), oracle.apply_causal_mask(scores))
    assert np.array_equal(scores, np.random.default_rng(5).standard_normal(shape).astype(dtype) * 30)  # untouched


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_each_known_mistake_computes_what_the_oracle_does_with_that_mistake(dtype):
    rng = np.random.default_rng(7)
    Q, K, V = (rng.standard_normal((3, 50, 16)).astype(dtype) * 2 for _ in range(3))
    A = np.tril(rng.random((3, 50, 50))).astype(dtype)
    close = dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(known_mistakes.weighted_sum_transposed(A, V),
                               oracle.weighted_sum(np.swapaxes(A, -1, -2), V), **close)
    np.testing.assert_allclose(known_mistakes.attention(Q, K, V), oracle.causal_attention(Q, K, V), **close)
    np.testing.assert_allclose(known_mistakes.attention(Q, K, V, scaled=False),
                               oracle.causal_attention(Q.astype(np.float64) * 4, K, V), **close)
    np.testing.assert_allclose(known_mistakes.attention(Q, K, V, ahead=1),
                               oracle.attention_seeing_ahead(Q, K, V, 1), **close)
    # each differs from the right answer: a hint that matched the right answer would name a mistake not made
    for wrong in (known_mistakes.attention(Q, K, V, scaled=False), known_mistakes.attention(Q, K, V, ahead=1)):
        assert not np.allclose(wrong, oracle.causal_attention(Q, K, V), rtol=1e-3)


def test_a_wrong_answer_s_message_and_hints_import_no_torch():
    """In a process of its own (torch must not be imported before): the mask's message and the weighted sum's and
    the kernel's hints, each on the mistake it names, with no answer cache (memo computes in the process)."""
    code = textwrap.dedent("""
        import sys
        import numpy as np
        from grader.judge import hints, known_mistakes
        from grader.judge.compare import masked_scores, mask_wrong_elements, mismatch
        from grader.judge.tolerances import MASK_LIMIT
        rng = np.random.default_rng(0)
        Q, K, V = (rng.standard_normal((2, 40, 8)) for _ in range(3))
        scores = rng.standard_normal((2, 40, 40))
        leaky = masked_scores(scores)
        leaky[0, 3, 9] = 1.0
        message = str(mismatch(leaky, masked_scores(scores), mask_wrong_elements(leaky, scores, MASK_LIMIT),
                               what="mask", hints=hints.apply_causal_mask(leaky, scores)))
        A = np.tril(rng.random((2, 40, 40)))
        named = [h.mistake for h in hints.weighted_sum(known_mistakes.weighted_sum_transposed(A, V), None, A, V)]
        for got in (known_mistakes.attention(Q, K, V, scaled=False), known_mistakes.attention(Q, K, V, ahead=1)):
            named += [h.mistake for h in hints.kernel(got, None, Q, K, V, "forward")]
        print(message.splitlines()[0], named, "torch" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["mask:", "1", "of", "3200", "elements", "wrong",
                                   "['weights_transposed',", "'kernel_no_scale',", "'kernel_mask_off_by_one']",
                                   "False"], done.stdout


def test_a_kernel_s_mistake_is_named_as_the_whole_answer_check_names_it():
    """hints._kernel_mistake looks at the first head before computing the whole mistaken answer: it decides as
    _matches on the whole answer does, on answers near its limit too (a first head just inside it, a later head
    just outside it)."""
    from grader.judge import hints
    rng = np.random.default_rng(11)
    Q, K, V = (rng.standard_normal((3, 40, 8)).astype(np.float32) for _ in range(3))
    V[0] /= 10  # the first head's answer far below the whole answer's largest entry, which sets the limit
    for mistake in ({"scaled": False}, {"ahead": 1}):
        wrong = known_mistakes.attention(Q, K, V, **mistake)
        limit = 1e-3 * np.max(np.abs(wrong))
        answers = [wrong, known_mistakes.attention(Q, K, V), known_mistakes.attention(Q, K, V, ahead=2)]
        for head, times in ((0, 0.9), (0, 1.1), (2, 0.9), (2, 1.1)):
            near = wrong.copy()
            near[head, 7, 3] += times * limit
            answers.append(near)
        decided = [hints._kernel_mistake(a, Q, K, V, f"test {mistake}", **mistake) for a in answers]
        assert decided == [hints._matches(a, wrong) for a in answers] == [True, False, False, True, False, True,
                                                                           False], (mistake, decided)
