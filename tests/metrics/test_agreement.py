import math

import pytest

from veriscribe.metrics.agreement import cohen_kappa, observed_agreement

LEVELS = ["fully", "partial", "neither"]


def expand(matrix: list[list[int]]) -> tuple[list[str], list[str]]:
    """Turn a confusion matrix (rows rater A, columns rater B) into label lists."""
    a: list[str] = []
    b: list[str] = []
    for i, row in enumerate(matrix):
        for j, count in enumerate(row):
            a += [LEVELS[i]] * count
            b += [LEVELS[j]] * count
    return a, b


def test_hand_computed_two_by_two() -> None:
    # p_o = 3/4; marginals yes .5/.25, so p_e = .5*.25 + .5*.75 = .5; kappa = .5.
    a = ["yes", "yes", "no", "no"]
    b = ["yes", "no", "no", "no"]
    assert observed_agreement(a, b) == 0.75
    assert cohen_kappa(a, b) == pytest.approx(0.5)
    assert cohen_kappa(b, a) == pytest.approx(0.5)


def test_hand_computed_weighted_three_levels() -> None:
    # O = [[1,1,0],[0,1,0],[0,0,1]] / 4; rows .5 .25 .25, columns .25 .5 .25.
    a = ["fully", "fully", "partial", "neither"]
    b = ["fully", "partial", "partial", "neither"]
    # Plain: p_o = .75, p_e = .125 + .125 + .0625 = .3125.
    assert cohen_kappa(a, b) == pytest.approx((0.75 - 0.3125) / (1 - 0.3125))
    # Linear: observed disagreement .25 * .5 = .125; chance disagreement
    # .5*(.5*.5 + .25*1) + .25*(.25*.5 + .25*.5) + .25*(.25*1 + .5*.5) = .4375.
    assert cohen_kappa(a, b, labels=LEVELS, weights="linear") == pytest.approx(
        1 - 0.125 / 0.4375
    )


def test_paper_annotator_against_judge() -> None:
    # Table 10 of the verifiable-by-construction paper: 70 claim/quote pairs,
    # kappa 0.858 and quadratic-weighted 0.911, agreement 91.4%.
    a, b = expand([[30, 4, 0], [0, 26, 2], [0, 0, 8]])
    assert observed_agreement(a, b) == pytest.approx(0.914, abs=5e-4)
    assert cohen_kappa(a, b) == pytest.approx(0.858, abs=5e-4)
    weighted = cohen_kappa(a, b, labels=LEVELS, weights="quadratic")
    assert weighted == pytest.approx(0.911, abs=5e-4)


def test_paper_two_annotators() -> None:
    a, b = expand([[33, 1, 0], [2, 25, 1], [1, 1, 6]])
    assert cohen_kappa(a, b) == pytest.approx(0.853, abs=5e-4)
    weighted = cohen_kappa(a, b, labels=LEVELS, weights="quadratic")
    assert weighted == pytest.approx(0.858, abs=5e-4)


def test_perfect_and_chance_level_agreement() -> None:
    assert cohen_kappa(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    # Rater B says "x" for everything: agreement is exactly what chance predicts.
    assert cohen_kappa(["x", "y", "x", "y"], ["x", "x", "x", "x"]) == 0.0


def test_undefined_when_both_raters_use_one_label() -> None:
    assert math.isnan(cohen_kappa(["x", "x"], ["x", "x"]))


def test_invalid_input_is_rejected() -> None:
    with pytest.raises(ValueError):
        cohen_kappa(["a"], ["a", "b"])
    with pytest.raises(ValueError):
        cohen_kappa([], [])
    with pytest.raises(ValueError):
        cohen_kappa(["a", "b"], ["a", "c"], labels=["a", "b"])
    with pytest.raises(ValueError):
        cohen_kappa(["a", "b"], ["a", "b"], weights="linear")
