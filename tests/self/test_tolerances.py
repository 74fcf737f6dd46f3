"""The tolerances pass every correct float32/float64 answer and fail small real errors; messages read well."""

import numpy as np
import pytest

from grader.judge import inputs
from grader.judge import oracle
from grader.judge import tolerances as tol
from grader.judge.compare import WrongAnswer, assert_close, describe_mismatch, wrong_elements
from helpers import ROOT

CASE = inputs.Case("test", (3,), 129, 64)


def load_reference():
    import importlib.util
    spec = importlib.util.spec_from_file_location("ref", ROOT / "solutions" / "attention.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reference_in_its_own_dtype_is_inside_every_bound_with_room(dtype):
    ref, rng = load_reference(), inputs.rng_for("tol", 7)
    Q, K, V = inputs.qkv(rng, CASE, dtype)
    big = inputs.masked_scores(rng, CASE, dtype, magnitude=1e4)
    checks = [
        (ref.scale_scores(Q, K), oracle.scale_scores(Q, K), tol.scale_scores_bound(Q, K, dtype)),
        (ref.row_softmax(big), oracle.row_softmax(big), None),
        (ref.causal_attention(Q, K, V), oracle.causal_attention(Q, K, V),
         tol.attention_bound(Q, K, V, dtype)),
    ]
    for got, expected, bound in checks:
        if bound is None:
            bound = tol.softmax_bound(big, expected, dtype)
        err = np.abs(got.astype(np.float64) - expected)
        finite = np.isfinite(expected)
        allowed = finite & (bound > 0)
        assert np.max(err[allowed] / bound[allowed]) < 0.5  # a correct answer uses under half its allowance
        assert not err[finite & (bound == 0)].any()  # and is exact where none is allowed (a masked softmax: 0)


def test_a_small_real_error_fails():
    rng = inputs.rng_for("tol2", 7)
    Q, K, _ = inputs.qkv(rng, CASE, np.float32)
    expected = oracle.scale_scores(Q, K)
    bound = tol.scale_scores_bound(Q, K, np.float32)
    nudged = (expected * (1 + 1e-3)).astype(np.float32)  # one part in a thousand: far from rounding
    assert wrong_elements(nudged, expected, bound).mean() > 0.9


def test_nan_never_matches_and_inf_must_match_exactly():
    expected = np.array([1.0, -np.inf, np.nan, 2.0])
    got = np.array([np.nan, -np.inf, np.nan, np.inf])
    assert wrong_elements(got, expected, np.full(4, 1e-6)).tolist() == [True, False, False, True]


def test_mismatch_message_lists_first_indices_errors_and_nan_counts():
    expected = np.zeros((2, 3))
    got = expected.copy()
    got[0, 1], got[1, 2] = 0.5, np.nan
    with pytest.raises(WrongAnswer) as err:
        assert_close(got, expected, np.full((2, 3), 1e-9), what="f on test", hints=lambda: ["look here"])
    text = str(err.value)
    assert "f on test: 2 of 6 elements wrong" in text
    assert "(0, 1): got 0.5 vs expected 0" in text and "(1, 2): got nan vs expected 0" in text
    assert "max abs error 0.5" in text and "NaN: 1 got vs 0 expected" in text and "hint: look here" in text


def test_describe_shows_at_most_five_indices():
    wrong = np.ones((100, 100), dtype=bool)
    text = describe_mismatch(np.ones((100, 100)), np.zeros((100, 100)), wrong, what="x")
    assert text.count(": got ") == 5 and "10000 of 10000" in text


def test_describe_reports_the_largest_errors_among_the_wrong_finite_elements_only():
    """Over several chunks: errors of elements not marked wrong, and of NaN or infinite ones, never set the
    maxima; NaN and Inf are counted on both sides."""
    rng = np.random.default_rng(5)
    expected = rng.standard_normal(3 * (1 << 18) + 7)
    got = (expected + rng.uniform(-1, 1, expected.size)).astype(np.float32)
    wrong = rng.random(expected.size) < 0.5
    got[~wrong & (np.arange(expected.size) % 1000 == 0)] = 1e6  # large errors, not marked wrong
    got[10], expected[20], got[30] = np.nan, np.inf, -np.inf
    wrong[[10, 20, 30]] = True
    counted = wrong & np.isfinite(got) & np.isfinite(expected)
    err = np.abs(got.astype(np.float64) - expected)[counted]
    rel = err / np.maximum(np.abs(expected[counted]), np.finfo(np.float64).tiny)
    with np.errstate(invalid="ignore"):
        text = describe_mismatch(got, expected, wrong, what="x")
    assert f"max abs error {err.max():.3g}, max rel error {rel.max():.3g}" in text
    assert "NaN: 1 got vs 0 expected; Inf: 1 got vs 1 expected" in text
    assert f"x: {int(wrong.sum())} of {expected.size} elements wrong" in text


def test_float32_comparison_never_fails_a_correct_element_by_its_own_rounding():
    # float32 answers are compared in float32; this element is exactly at its bound in float64 (|got - expected|
    # = 2**-23 - 2**-30), but float32(expected) = 1.0 puts the float32 difference at 2**-23, above it
    expected = np.array([1 + 2.0 ** -30, 1.0, 1.0])
    got = np.array([1 + 2.0 ** -23, 1.0, 1 + 2.0 ** -20], dtype=np.float32)
    bound = np.full(3, 2.0 ** -23 - 2.0 ** -30, dtype=np.float32)
    assert np.float32(abs(got[0] - np.float32(expected[0]))) > bound[0]  # the float32 pass alone would fail it
    assert wrong_elements(got, expected, bound).tolist() == [False, False, True]
    assert wrong_elements(got, expected, bound, scale=0.5).tolist() == [True, False, True]


@pytest.mark.parametrize("how", ["far off everywhere", "at the bound everywhere", "a few off", "non-finite"])
def test_every_element_is_decided_as_float64_decides_it(how):
    """wrong_elements compares in float32 and re-decides in float64 only what could change (a float32 difference
    over twice its bound cannot). On answers that take each of its paths, at scale 1 and 2: it never fails an
    element float64 finds right, and away from the bound (by more than float32's rounding of the difference)
    its verdict is float64's own (closer, float32 may find right what float64 finds just over the bound)."""
    rng = np.random.default_rng(17)
    expected = rng.standard_normal(3 * (1 << 18) + 5)  # several chunks and a short last one
    u = tol.unit_roundoff(np.float32)
    bound = (np.abs(expected) * tol.SAFETY * tol.gamma(3, np.float32) + 2.0 ** -30).astype(np.float32)  # tightest
    r = rng.random(expected.size)
    off = {"far off everywhere": 10 * bound.astype(np.float64),
           "at the bound everywhere": bound * rng.choice([0.999999, 1.000001, 2.0 ** -24 + 1], expected.size),
           "a few off": np.select([r < 1e-3, r < 2e-2], [1.0, bound * 1.000001], 0.0),  # far, and near the bound
           "non-finite": np.where(rng.random(expected.size) < 0.3, 1.0, 0.0)}[how]
    got = (expected + off * rng.choice([-1, 1], expected.size)).astype(np.float32)
    if how == "non-finite":
        special = rng.choice([np.nan, np.inf, -np.inf], expected.size)
        pick = rng.random(expected.size) < 0.2
        got[pick], expected[pick[::-1]] = special[pick], special[pick[::-1]]
        same = rng.random(expected.size) < 0.1
        got[same] = expected[same]  # infinities and NaN matched exactly: right
    for scale in (1.0, 2.0):
        with np.errstate(invalid="ignore", over="ignore"):
            g, e = got.astype(np.float64), expected
            error = np.abs(g - e) / scale
            right = (error <= bound) | ((g == e) & np.isinf(e)) | (np.isnan(g) & np.isnan(e))
            clear = ~(np.abs(error - bound) <= 2 * u * (np.abs(e) + error))  # beyond float32's own rounding
        wrong = wrong_elements(got, expected, bound, scale)
        assert not (wrong & right).any(), (how, scale)
        assert np.array_equal(wrong[clear], ~right[clear]), (how, scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (2, 5, 5), (3, 130, 130), (2, 2, 64, 64)])
def test_the_fast_mask_check_decides_every_element_as_the_whole_array_check(shape, dtype):
    """mask_is_exact reads row blocks (their left, diagonal and right parts) and passes a right answer only; any one
    element made wrong, wherever it lies (kept or masked, in or out of a diagonal block, the last row or column),
    fails it exactly when mask_wrong_elements finds that element wrong."""
    from grader.judge.compare import mask_is_exact, mask_wrong_elements
    rng = np.random.default_rng(7)
    scores = rng.standard_normal(shape).astype(dtype)
    T = shape[-1]
    right = np.where(oracle.future_mask(T), dtype(-np.inf), scores)
    if T > 1:
        right[..., 0, -1] = tol.MASK_LIMIT  # at the lesson's -1e9 exactly: masked enough
    assert mask_is_exact(right, scores, tol.MASK_LIMIT) and not mask_wrong_elements(right, scores, tol.MASK_LIMIT).any()
    places = {(0, 0), (T - 1, T - 1), (T - 1, 0), (0, T - 1), (T // 2, T // 2 + 1), (T // 2 + 1, T // 2),
              tuple(rng.integers(0, T, 2))}
    for i, j in (p for p in places if max(p) < T):
        for value in (np.nan, 0.0, -0.0, dtype(scores[..., i, j].flat[0]) + 1, -1e8):
            got = right.copy()
            got.reshape(-1, T, T)[-1, i, j] = value
            whole = mask_wrong_elements(got, scores, tol.MASK_LIMIT)
            with np.errstate(invalid="ignore"):  # its definition, on whole arrays
                bits = f"u{got.itemsize}"
                defined = ~np.where(oracle.future_mask(T), got <= tol.MASK_LIMIT, got.view(bits) == scores.view(bits))
            assert np.array_equal(whole, defined), (i, j, value)
            assert mask_is_exact(got, scores, tol.MASK_LIMIT) == (not whole.any()), (i, j, value)
            assert whole.any() or (j <= i and value == scores.reshape(-1, T, T)[-1, i, j])


def test_the_mask_hint_names_the_first_leak_in_the_array_s_order_and_counts_them_all():
    """hints.apply_causal_mask reads blocks of rows of every head: the leak it names is still the first in the
    array's own order (head, row, column), not the first its blocks meet."""
    from grader.judge import hints
    T = 300
    scores = np.random.default_rng(3).standard_normal((3, T, T)).astype(np.float32)
    got = np.where(oracle.future_mask(T), np.float32(-np.inf), scores)
    got[2, 5, 9] = got[1, 250, 251] = got[1, 260, 299] = 0.5  # block 0 of head 2 comes before head 1's block 3
    got[0, 7, 7] = -np.inf  # the present hidden
    got[2, 100, 3] += 1  # the past changed
    texts = [str(h) for h in hints.apply_causal_mask(got, scores)]
    assert any("3 entries with j > i are not masked (first: row 250, column 251)" in t for t in texts), texts
    assert any("hides the present" in t for t in texts) and any("below the diagonal were changed" in t for t in texts)
    assert len(hints.apply_causal_mask(np.where(oracle.future_mask(T), np.float32(-np.inf), scores), scores)) == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_softmax_must_give_exactly_0_where_the_score_is_minus_inf(dtype):
    """The causal mask's promise: the bound is 0 there, so the one comparison also refuses the smallest nonzero."""
    scores = inputs.masked_scores(inputs.rng_for("tol3", 7), CASE, dtype)
    expected = oracle.row_softmax(scores)
    bound = tol.softmax_bound(scores, expected, dtype)
    got = expected.astype(dtype)
    assert not wrong_elements(got, expected, bound).any()
    got[0, 0, 1] = np.finfo(dtype).smallest_subnormal  # above the diagonal: masked
    assert np.flatnonzero(wrong_elements(got, expected, bound)).tolist() == [1]
