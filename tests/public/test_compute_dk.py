"""compute_dk: the width of one head, d_k = d_model // n_head."""

import pytest

from grader.compare import WrongAnswer

pytestmark = pytest.mark.exercise("compute_dk")


def expect_dk(student, d_model, n_head, want):
    got = student.call("compute_dk", d_model, n_head)
    if got != want:
        raise WrongAnswer(f"compute_dk({d_model}, {n_head}) returned {got}, expected {want} "
                          f"(= {d_model} // {n_head})")


def expect_value_error(student, d_model, n_head, why):
    try:
        got = student.call("compute_dk", d_model, n_head)
    except Exception as exc:
        if getattr(exc, "is_value_error", False):
            return
        if not hasattr(exc, "is_value_error"):
            raise  # not implemented yet, crashed, timed out: reported as it is
        raise WrongAnswer(f"compute_dk({d_model!r}, {n_head!r}) raised {exc.type_name}; "
                          f"expected ValueError because {why}\n{exc}") from None
    raise WrongAnswer(f"compute_dk({d_model!r}, {n_head!r}) returned {got!r}; expected a ValueError because {why}")


@pytest.mark.points(1)
def test_andrea_120m(student):
    expect_dk(student, 768, 12, 64)


@pytest.mark.points(1)
@pytest.mark.parametrize("d_model,n_head", [(512, 8), (1024, 16), (192, 12), (6, 3), (64, 1), (768, 768)])
def test_other_models(student, d_model, n_head):
    expect_dk(student, d_model, n_head, d_model // n_head)


@pytest.mark.points(1)
def test_rejects_heads_that_do_not_divide(student):
    for d_model, n_head in [(768, 10), (100, 3), (12, 24)]:
        expect_value_error(student, d_model, n_head, f"{n_head} heads cannot split d_model = {d_model} evenly")


@pytest.mark.points(1)
def test_rejects_non_positive_or_non_int(student):
    for d_model, n_head in [(0, 12), (768, 0), (-768, 12), (768, -12), (768.0, 12), (768, 12.5), ("768", 12)]:
        expect_value_error(student, d_model, n_head, "d_model and n_head must be positive ints")
