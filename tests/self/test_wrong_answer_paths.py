"""What a wrong answer's message and hints compare it with: the mask's message with the masked scores built in
numpy (compare.masked_scores: the oracle's value for value, no torch), a kernel's known mistakes computed whole only
where the first head could be one (hints._kernel_mistake: deciding as the whole-answer check does), and made
ahead by prebuild (grader/judge/mistaken_answers.py)."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from grader.judge import oracle
from grader.judge.compare import masked_scores
from helpers import ROOT


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (17, 17), (2, 3, 64, 64)])
def test_the_masked_scores_are_the_oracle_s_value_for_value(shape, dtype):
    scores = np.random.default_rng(5).standard_normal(shape).astype(dtype) * 30
    mine = masked_scores(scores)
    assert mine.dtype == scores.dtype and np.array_equal(mine.astype(np.float64), oracle.apply_causal_mask(scores))
    assert np.array_equal(scores, np.random.default_rng(5).standard_normal(shape).astype(dtype) * 30)  # untouched


def test_a_wrong_mask_s_message_imports_no_torch():
    """In a process of its own (torch must not be imported before): a wrong mask's message and hints. Every other
    answer a wrong mask needs, grading the reference made (Gradescope's image: grader/course/prebuild.py)."""
    code = textwrap.dedent("""
        import sys
        import numpy as np
        from grader.judge import hints
        from grader.judge.compare import masked_scores, mask_wrong_elements, mismatch
        from grader.judge.tolerances import MASK_LIMIT
        scores = np.random.default_rng(0).standard_normal((2, 40, 40))
        leaky = masked_scores(scores)
        leaky[0, 3, 9] = 1.0
        message = str(mismatch(leaky, masked_scores(scores), mask_wrong_elements(leaky, scores, MASK_LIMIT),
                               what="mask", hints=hints.apply_causal_mask(leaky, scores)))
        print(message.splitlines()[0], "torch" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["mask:", "1", "of", "3200", "elements", "wrong", "False"], done.stdout


def test_a_kernel_s_mistake_is_named_as_the_whole_answer_check_names_it():
    """hints._kernel_mistake looks at the first head before computing the whole mistaken answer: it decides as
    _matches on the whole answer does, on answers near its limit too (a first head just inside it, a later head
    just outside it)."""
    from grader.judge import hints, mistaken_answers
    rng = np.random.default_rng(11)
    Q, K, V = (rng.standard_normal((3, 40, 8)).astype(np.float32) for _ in range(3))
    V[0] /= 10  # the first head's answer far below the whole answer's largest entry, which sets the limit
    for mistake, (_, words) in mistaken_answers.KERNEL.items():
        wrong = mistaken_answers.attention(Q, K, V, **words)
        limit = 1e-3 * np.max(np.abs(wrong))
        answers = [wrong, oracle.causal_attention(Q, K, V), oracle.attention_seeing_ahead(Q, K, V, 2)]
        for head, times in ((0, 0.9), (0, 1.1), (2, 0.9), (2, 1.1)):
            near = wrong.copy()
            near[head, 7, 3] += times * limit
            answers.append(near)
        decided = [hints._kernel_mistake(a, Q, K, V, mistake) for a in answers]
        assert decided == [hints._matches(a, wrong) for a in answers] == [True, False, False, True, False, True,
                                                                           False], (mistake, decided)
    unscaled = oracle.causal_attention(Q.astype(np.float64) * np.sqrt(8), K, V)  # the mistake, as the oracle makes it
    np.testing.assert_allclose(mistaken_answers.attention(Q, K, V, scaled=False), unscaled, rtol=1e-12, atol=1e-12)


def test_prebuild_makes_the_known_mistakes_a_wrong_answer_is_compared_with(tmp_path, monkeypatch):
    """prebuild grades the reference with memo.prepare() on, and mistaken_answers.prepare puts in the answer cache
    the known mistakes' answers a wrong weighted sum or kernel is compared with: a later grading (a fresh container
    on Gradescope) names those mistakes with no oracle, so no torch. A test the reference's grading never prepared
    still needs the oracle."""
    from grader.judge import hints, memo, mistaken_answers, shared_expected
    rng = np.random.default_rng(3)
    Q, K, V = (rng.standard_normal((2, 24, 8)).astype(np.float32) for _ in range(3))
    A = rng.random((2, 24, 24)).astype(np.float32)
    answers = {"weights_transposed": oracle.weighted_sum(np.swapaxes(A, -1, -2), V).astype(np.float32),
               **{m: mistaken_answers.attention(Q, K, V, **words).astype(np.float32)
                  for m, (_, words) in mistaken_answers.KERNEL.items()}}
    monkeypatch.setattr(memo, "_state", dict(memo._state, key=None, preparing=False))
    shared_expected.use(tmp_path)
    try:
        memo.begin("a test the reference was graded on")
        mistaken_answers.prepare("weighted_sum", (A, V))  # not preparing: makes nothing
        assert not any(tmp_path.iterdir())
        memo.prepare()
        mistaken_answers.prepare("weighted_sum", (A, V))
        mistaken_answers.prepare("cuda_kernel", (Q, K, V))
        memo.prepare(False)
        memo.begin("another test")
        memo.begin("a test the reference was graded on")  # a later grading's: nothing in memory, all on disk

        def no_oracle(*args, **kwargs):
            raise AssertionError("the oracle was called")
        monkeypatch.setattr(oracle, "weighted_sum", no_oracle)
        monkeypatch.setattr(oracle, "attention_seeing_ahead", no_oracle)
        named = {"weights_transposed": hints.weighted_sum(answers["weights_transposed"], None, A, V)}
        for mistake in mistaken_answers.KERNEL:
            named[mistake] = hints.kernel(answers[mistake], None, Q, K, V, "forward")
        assert {m: hints.mistakes_of(h) for m, h in named.items()} == {m: [m] for m in answers}
        memo.begin("a test the reference was not graded on")
        with pytest.raises(AssertionError, match="the oracle was called"):
            hints.weighted_sum(answers["weights_transposed"], None, A, V)
    finally:
        shared_expected.use(None)


def test_the_batch_hint_speaks_of_the_function_that_raised():
    """A mask taking T from scores.shape[0] is told about the last axis, not about K.T, which it never used."""
    from grader.judge import hints
    said = "operands could not be broadcast together with shapes (12,12) () (12,1024,1024)"
    mask = hints.batch_dims(said, 3, "apply_causal_mask")
    assert mask.mistake == "batch_dims" and "scores.shape[-1], not scores.shape[0]" in mask and "K.T" not in mask
    assert "np.swapaxes(K, -1, -2)" in hints.batch_dims(said, 3, "scale_scores")
    assert "axis=-1 with keepdims=True" in hints.batch_dims(said, 3, "row_softmax")
    assert hints.batch_dims(said, 2, "apply_causal_mask") is None  # no batch dimensions: not this mistake
