import math

import pytest

from veriscribe.metrics.novelty import ngram_novelty, ngrams, novelty_stats

ARTICLE = "the cat sat on the mat".split()
# Bigrams: the-cat (twice), cat-lay, lay-on, on-the, the-mat, mat-the: six distinct,
# of which cat-lay, lay-on and mat-the are not in the article.
SUMMARY = "the cat lay on the mat the cat".split()


def test_bigram_novelty_counts_distinct_bigrams() -> None:
    assert ngram_novelty(ARTICLE, SUMMARY, 2) == 3 / 6


def test_trigram_novelty() -> None:
    # Six distinct trigrams; only "on the mat" occurs in the article.
    assert ngram_novelty(ARTICLE, SUMMARY, 3) == 5 / 6


def test_copy_has_no_novelty_and_unrelated_text_is_all_novel() -> None:
    assert novelty_stats("The cat sat.", "The cat sat.") == {
        "bigram_novelty": 0.0,
        "trigram_novelty": 0.0,
    }
    assert ngram_novelty(ARTICLE, "dogs bark loudly".split(), 2) == 1.0


def test_novelty_runs_over_punctuation_and_case() -> None:
    # Tokens: "cells", "grew", "." in both texts, whatever the case.
    assert novelty_stats("Cells grew.", "CELLS GREW.")["bigram_novelty"] == 0.0
    # "grew ." is in the article, "grew ," is not.
    assert novelty_stats("Cells grew.", "cells grew,")["bigram_novelty"] == 1 / 2


def test_summary_shorter_than_n_is_nan() -> None:
    stats = novelty_stats("a long enough article", "word")
    assert math.isnan(stats["bigram_novelty"])
    assert math.isnan(stats["trigram_novelty"])
    assert novelty_stats("x", "a b")["bigram_novelty"] == 1.0


def test_ngrams() -> None:
    assert ngrams(["a", "b", "a", "b"], 2) == {("a", "b"), ("b", "a")}
    assert ngrams(["a"], 2) == set()
    with pytest.raises(ValueError):
        ngrams(["a"], 0)
