"""The reader-facing quality metrics of an abstract, and their summary."""

from __future__ import annotations

import math

import pytest

from veriscribe.metrics.abstract_quality import (
    abstract_quality,
    guidance_echoes,
    quality_summary,
)

ARTICLE = (
    "Sepsis is a leading cause of death. We randomised 412 adults to early or "
    "delayed antibiotics. Mortality at 28 days was 18% with early and 25% with "
    "delayed therapy. Some proteins switch to an insoluble state and cause disease."
)


def test_a_clean_abstract_scores_clean() -> None:
    abstract = (
        "Early antibiotics cut mortality at 28 days from 25% to 18% in 412 adults."
    )
    scores = abstract_quality(abstract, ARTICLE, words=14)
    assert scores == {
        "words": 14.0,
        "within_length": 1.0,
        "guidance_echoes": 0.0,
        "foreign_script_words": 0.0,
        "case_changes": 0.0,
        "bent_words": 0.0,
        "pointers": 0.0,
        "repeated_trigrams": 0.0,
        "number_precision": 1.0,
    }


def test_each_defect_is_counted() -> None:
    abstract = (
        "Methods: The design and the procedures were described. "
        "The research gap and the motivation for the work are significant. "
        "Proteins Switch To An Insoluble State \u0430nd cause disease. "
        "Mortality was 19% at 28 days, and mortality was 19% at 28 days."
    )
    scores = abstract_quality(abstract, ARTICLE, words=250)
    assert scores["words"] == 41.0
    assert scores["within_length"] == 0.0
    assert scores["guidance_echoes"] == 2.0
    assert scores["foreign_script_words"] == 1.0  # the Cyrillic "a" of "and"
    assert scores["case_changes"] == 5.0  # Switch, To, An, Insoluble, State
    assert scores["number_precision"] == pytest.approx(2 / 4)
    assert scores["repeated_trigrams"] > 0.1


def test_no_numbers_and_no_asked_length_are_undefined_not_perfect() -> None:
    scores = abstract_quality("Sepsis kills adults.", ARTICLE, words=0)
    assert math.isnan(scores["number_precision"])
    assert math.isnan(scores["within_length"])


def test_a_labelled_sentence_counts_as_an_echo() -> None:
    text = "Results: mortality fell. Mortality fell."
    assert guidance_echoes(text, ARTICLE) == ["Results: mortality fell."]


def test_the_summary_gives_means_the_longest_and_totals() -> None:
    rows = [
        abstract_quality("Mortality was 18% at 28 days in adults.", ARTICLE, 8),
        abstract_quality(
            "The research gap and the motivation for the work are significant. "
            "Mortality was 19% in adults with sepsis who were treated early.",
            ARTICLE,
            8,
        ),
    ]
    summary = quality_summary(rows)
    assert summary["words_mean"] == pytest.approx((8 + 22) / 2)
    assert summary["words_max"] == 22
    assert summary["within_length"] == 0.5
    assert summary["guidance_echoes"] == 1
    assert summary["number_precision"] == pytest.approx((1.0 + 0.0) / 2)
    assert math.isnan(quality_summary([])["words_mean"])
