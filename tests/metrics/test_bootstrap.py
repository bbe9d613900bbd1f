import math

import numpy as np
import pytest

from veriscribe.metrics.bootstrap import (
    PROXIMITY_METRICS,
    compare_metric,
    paired_bootstrap,
)


def test_raw_mean_difference_and_reproducibility() -> None:
    a = [0.9, 0.8, 0.7, 0.95, 0.85]
    b = [0.5, 0.6, 0.4, 0.55, 0.5]
    first = paired_bootstrap(a, b, seed=7)
    assert first.mean_difference == pytest.approx(0.33)
    assert first.n == 5 and first.resamples == 10_000
    assert first == paired_bootstrap(a, b, seed=7)
    assert first.ci_low > 0 and first.ci_high < 0.5
    # All five differences are positive, so no resample comes near zero: p is at
    # its floor of 1 / (resamples + 1).
    assert first.p_value == pytest.approx(1 / 10_001)


def test_reference_mode_compares_absolute_deviations() -> None:
    reference = [10.0, 20.0, 30.0]
    a = [12.0, 19.0, 30.0]  # deviations 2, 1, 0
    b = [5.0, 26.0, 33.0]  # deviations 5, 6, 3
    result = paired_bootstrap(a, b, reference=reference, resamples=500)
    assert result.mean_difference == pytest.approx((3 - 14) / 3)
    # Negative: A is closer to the reference than B.
    assert result.ci_high < 0


def test_swapping_systems_mirrors_the_result() -> None:
    rng = np.random.default_rng(3)
    a = rng.normal(0.5, 0.1, 50)
    b = a + rng.normal(0.02, 0.1, 50)
    ab = paired_bootstrap(list(a), list(b), seed=1)
    ba = paired_bootstrap(list(b), list(a), seed=1)
    assert ba.mean_difference == pytest.approx(-ab.mean_difference)
    assert ba.ci_low == pytest.approx(-ab.ci_high)
    assert ba.p_value == pytest.approx(ab.p_value)


def test_identical_systems_have_p_one() -> None:
    scores = [0.1, 0.4, 0.3, 0.8]
    result = paired_bootstrap(scores, scores, resamples=200)
    assert result.mean_difference == 0.0
    assert (result.ci_low, result.ci_high) == (0.0, 0.0)
    assert result.p_value == 1.0


def test_p_value_agrees_with_the_normal_approximation() -> None:
    # With many documents the bootstrap mean is close to normal, so the two-sided
    # p-value should match 2 * (1 - Phi(z)) for z = mean / standard error.
    rng = np.random.default_rng(11)
    differences = rng.normal(0.0, 1.0, 400)
    differences += 2.0 * differences.std() / math.sqrt(400) - differences.mean()
    a, b = list(differences), [0.0] * 400
    z = differences.mean() / (differences.std() / math.sqrt(400))
    expected = math.erfc(z / math.sqrt(2))  # two-sided normal p, about 0.046
    result = paired_bootstrap(a, b, resamples=20_000, seed=5)
    assert result.p_value == pytest.approx(expected, abs=0.01)
    half_width = 1.96 * differences.std() / math.sqrt(400)
    assert result.ci_low == pytest.approx(differences.mean() - half_width, abs=0.01)
    assert result.ci_high == pytest.approx(differences.mean() + half_width, abs=0.01)


def test_documents_without_finite_scores_are_left_out() -> None:
    nan = float("nan")
    result = paired_bootstrap([1.0, nan, 3.0, 4.0], [0.0, 1.0, 1.0, nan], resamples=100)
    assert result.n == 2
    assert result.mean_difference == pytest.approx(1.5)


def test_invalid_input_is_rejected() -> None:
    with pytest.raises(ValueError):
        paired_bootstrap([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [0.0])
    with pytest.raises(ValueError):
        paired_bootstrap([1.0, 2.0], [0.0, 1.0], resamples=0)
    with pytest.raises(ValueError):
        paired_bootstrap([1.0, 2.0], [0.0, 1.0], confidence=1.0)


def test_compare_metric_aligns_by_id_and_picks_the_mode() -> None:
    a = {"d1": 0.5, "d2": 0.7, "d3": 0.2, "only-a": 9.0}
    b = {"d3": 0.1, "d2": 0.4, "d1": 0.5}
    raw = compare_metric("rouge_l", a, b, resamples=100)
    assert raw.n == 3
    assert raw.mean_difference == pytest.approx((0.0 + 0.3 + 0.1) / 3)

    reference = {"d1": 0.6, "d2": 0.4, "d3": 0.3}
    near = compare_metric("density", a, b, reference=reference, resamples=100)
    # |a - ref| = .1, .3, .1 and |b - ref| = .1, 0, .2.
    assert near.mean_difference == pytest.approx((0.0 + 0.3 - 0.1) / 3)
    assert "trigram_novelty" in PROXIMITY_METRICS


def test_compare_metric_requires_a_reference_exactly_for_proximity_metrics() -> None:
    scores = {"d1": 1.0, "d2": 2.0}
    with pytest.raises(ValueError, match="reference"):
        compare_metric("compression", scores, scores)
    with pytest.raises(ValueError, match="raw scores"):
        compare_metric("rouge_l", scores, scores, reference=scores)


def test_as_dict_is_plain() -> None:
    result = paired_bootstrap([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], resamples=50)
    fields = result.as_dict()
    assert fields["n"] == 3 and fields["resamples"] == 50
    assert set(fields) >= {"mean_difference", "ci_low", "ci_high", "p_value"}
