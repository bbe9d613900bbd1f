import pytest

from veriscribe.metrics.rouge import rouge_l


def test_longest_common_subsequence_f1() -> None:
    # LCS "the cat on the mat": 5 of 6 tokens on both sides.
    score = rouge_l("The cat lay on the mat.", "the cat sat on the mat")
    assert score == pytest.approx(5 / 6)


def test_precision_and_recall_differ() -> None:
    # LCS 2; precision 2/2, recall 2/4, F1 = 2 * 1 * 0.5 / 1.5.
    assert rouge_l("cat mat", "the cat the mat") == pytest.approx(2 / 3)


def test_stemming_is_on_by_default() -> None:
    assert rouge_l("cats running", "cat runs") == pytest.approx(1.0)
    assert rouge_l("cats running", "cat runs", use_stemmer=False) == 0.0


def test_empty_prediction_scores_zero() -> None:
    assert rouge_l("", "the reference") == 0.0
