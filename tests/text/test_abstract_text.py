"""Numbers, case, script and guidance echoes of an abstract against its article."""

from __future__ import annotations

import math

import pytest

from veriscribe.checks.faithfulness import claim_conflict
from veriscribe.checks.wording import (
    CaseIndex,
    case_changes,
    foreign_script_words,
    repair_case,
    repeated_trigram_share,
)
from veriscribe.text import numbers
from veriscribe.text.guidance import (
    CONCISE_GUIDE,
    QUESTIONS,
    echoes_guidance,
    strip_facet_label,
)
from veriscribe.text.numbers import ArticleNumbers, number_mentions, number_precision
from veriscribe.text.tokens import content_words

ARTICLE = (
    "Sepsis is a leading cause of death. We randomised 1,412 adults to early or "
    "delayed antibiotics. Mortality at 28 days was 18% with early and 25% with "
    "delayed therapy (P < 0.05). The dose was 25 mg/kg. IL-6 fell by \u22123.2 pg/mL."
    "\n\nSome proteins switch to a disease-causing insoluble state. Several human "
    "diseases are highly relevant here. Samples came from Paris and DNA was read."
)


# ------------------------------------------------------------------------ numbers


def test_numbers_are_normalised_before_they_are_compared() -> None:
    values = [
        m.value for m in number_mentions("1,234 and 1\u2009234; \u22123; 0\u00b705")
    ]
    assert values == ["1234", "1234", "-3", "0.05"]
    article = ArticleNumbers.of(ARTICLE)
    assert (
        article.unsupported("We randomised 1412 adults; IL-6 fell by -3.2 pg/mL.") == []
    )
    assert article.unsupported("Mortality was 18 % against 25%.") == []


def test_a_changed_number_unit_or_p_comparison_is_not_supported() -> None:
    article = ArticleNumbers.of(ARTICLE)
    assert article.unsupported("Mortality was 19% at 28 days.") == ["19%"]
    assert article.unsupported("The dose was 25 \u00b5g.") == ["25 \u00b5g"]
    assert article.unsupported("The difference was significant (P = 0.05).") == ["0.05"]
    assert article.unsupported("It held for 30 days.") == ["30 days"]
    assert article.unsupported("IL-8 rose.") == ["8"]


def test_numbers_in_words_are_numbers_with_their_value() -> None:
    values = [
        (m.text, m.value)
        for m in number_mentions(
            "Twenty-five of one hundred and five; 1.2 million, a billion and 3 thousand;"
            " between two and three; none."
        )
    ]
    assert values == [
        ("1.2 million", "1200000"),
        ("3 thousand", "3000"),
        ("Twenty-five", "25"),
        ("one hundred and five", "105"),
        ("a billion", "1000000000"),
        ("two", "2"),
        ("three", "3"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "TWENTY-FIVE of One Hundred And Five; MILLIONS of cells, Tens of Thousands.",
        "Ninety-Nine \u212a one; 1.2 Million and A Billion; Hundreds.",
        "ſix hundred and ſeven cases; one more.",
        "f\u0131ve hundred and one cases; two more.",
        "\u0130N THOUSANDS of cases; two more; one hundred.",
        "Xthousands and twomillions, not Thousands or one.",
    ],
)
def test_number_words_read_alike_in_any_case(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    # Lower-cased reading is a shortcut: the case-blind patterns must agree with it.
    quick = number_mentions(text)
    monkeypatch.setattr(numbers, "_WORD_RUN_LOWER", numbers._WORD_RUN)
    monkeypatch.setattr(numbers, "_PLURAL_SCALE_LOWER", numbers._PLURAL_SCALE)
    assert number_mentions(text) == quick
    assert len(quick) >= 2


def test_a_changed_number_word_in_capitals_is_not_supported() -> None:
    article = ArticleNumbers.of(
        "We enrolled twenty-five adults; thousands of doses were given (P = 0.03)."
    )
    assert article.unsupported("We enrolled TWENTY-SIX adults.") == ["TWENTY-SIX"]
    assert article.unsupported("MILLIONS of doses were given.") == ["MILLIONS"]
    assert article.unsupported("The effect held (p < 0.03).") == ["0.03"]
    assert article.unsupported("We enrolled Twenty-Five adults; THOUSANDS.") == []
    # A look-alike letter never makes a number the article states.
    assert article.unsupported("We enrolled twenty-f\u0131ve adults.") != []
    conflict = claim_conflict(
        "We enrolled TWENTY-SIX adults.", "We enrolled twenty-five adults."
    )
    assert conflict is not None and conflict.kind == "number"


def test_a_p_value_starts_a_word() -> None:
    values = [
        (m.value, m.p_op) for m in number_mentions("pP<0.1, (P<0.05) and P = .01")
    ]
    assert values == [("0.1", ""), ("0.05", "<"), ("0.01", "=")]


def test_a_changed_number_word_or_scale_is_not_supported() -> None:
    article = ArticleNumbers.of(
        "More than one million babies were born by IVF in 2 centres, 1,200,000 in all."
    )
    assert article.unsupported("One billion babies were born by IVF.") == [
        "One billion"
    ]
    assert article.unsupported("A million babies; 1.2 million in two centres.") == []
    assert article.unsupported("Three centres took part.") == ["Three"]
    assert article.unsupported("1.2 billion babies.") == ["1.2 billion"]


def test_a_plural_scale_is_an_order_of_magnitude() -> None:
    article = ArticleNumbers.of("Millions of Americans; 2,345 patients; 350 files.")
    assert [m.value for m in number_mentions("tens of thousands")] == ["1000s"]
    assert article.unsupported("Billions of Americans are poor.") == ["Billions"]
    assert article.unsupported("Millions of Americans; thousands of patients.") == []
    assert article.unsupported("Hundreds of files.") == []


def test_number_precision_is_the_share_the_article_gives() -> None:
    article = ArticleNumbers.of(ARTICLE)
    assert number_precision("No numbers here.", article) is None
    assert number_precision("Of 1,412 adults, 18% and 19% died.", article) == (
        pytest.approx(2 / 3)
    )


# ------------------------------------------------------------------ case, script


def test_case_changes_are_words_the_article_writes_only_in_lower_case() -> None:
    index = CaseIndex.of(ARTICLE)
    text = (
        "These proteins may be Highly Relevant to Several Defending Human Diseases. "
        "They Switch To A Disease-Causing Insoluble State in Paris, with DNA."
    )
    found = case_changes(text, index)
    assert found == [
        "Highly",
        "Relevant",
        "Human",
        "Diseases",
        "Switch",
        "To",
        "A",
        "Disease",
        "Causing",
        "Insoluble",
        "State",
    ]
    repaired, words = repair_case(text, index)
    assert words == found
    # "Several" starts a sentence in the article only, "Defending" is not in it,
    # Paris and DNA are names: all untouched, as is the first word of a sentence.
    assert repaired == (
        "These proteins may be highly relevant to Several Defending human diseases. "
        "They switch to a disease-causing insoluble state in Paris, with DNA."
    )
    assert case_changes(repaired, index) == []


def test_a_capital_after_a_sentence_end_or_label_is_not_a_case_change() -> None:
    index = CaseIndex.of(ARTICLE)
    assert (
        case_changes("Results: Mortality fell. \u201cSeveral\u201d died.", index) == []
    )


def test_foreign_script_words_use_letters_the_article_does_not() -> None:
    text = "Cells \u0430nd \u03b2-cells of cerebralalaria."  # Cyrillic a in "and"
    assert foreign_script_words(text, "Cells and \u03b2 cells.") == ["\u0430nd"]
    assert foreign_script_words(text, "Cells and cells.") == ["\u0430nd", "\u03b2"]


def test_repeated_trigram_share() -> None:
    assert repeated_trigram_share("the cells grew and the cells grew") == (
        pytest.approx(1 / 5)
    )
    assert repeated_trigram_share("one two three four") == 0.0
    assert math.isnan(repeated_trigram_share("too short"))


# ---------------------------------------------------------------------- guidance


@pytest.mark.parametrize(
    "sentence",
    [
        "The research gap and the motivation for the work are significant.",
        "The design and procedures involved in the study were described.",
        "The key findings and their data are presented.",
        "The results support the conclusions.",
        "What gap in knowledge motivated the work?",
        # Seen on the bundled model: the question's phrase opening a sentence.
        "The gap in knowledge motivated the work by Sidney Farber's theory of "
        "chemotherapy, which was simple and effective in treating cancer.",
        "This gap in knowledge motivated this work by the authors' suggestion of "
        "using odds ratios to the relative risk.",
    ],
)
def test_sentences_that_restate_the_guidance_are_echoes(sentence: str) -> None:
    assert echoes_guidance(sentence, frozenset(content_words(ARTICLE)))


@pytest.mark.parametrize(
    "sentence",
    [
        "The primary outcome was mortality at 28 days.",
        "The study design was a randomised trial of adults with sepsis.",
        "These findings have important implications for sepsis therapy.",
        "Proteins that switch to an insoluble state cause human diseases.",
    ],
)
def test_sentences_about_the_article_are_not_echoes(sentence: str) -> None:
    assert not echoes_guidance(sentence, frozenset(content_words(ARTICLE)))


def test_every_question_and_concise_guide_written_back_is_an_echo() -> None:
    words = frozenset(content_words(ARTICLE))
    for text in QUESTIONS.values():
        assert echoes_guidance(text, words), text
    for guide in CONCISE_GUIDE.values():
        text = f"{guide[0].upper()}{guide[1:-1]} are described in the study."
        assert echoes_guidance(text, words), text


def test_facet_labels_are_stripped_but_not_words_that_begin_alike() -> None:
    assert strip_facet_label("Methods: we randomised adults.") == (
        "We randomised adults.",
        True,
    )
    assert strip_facet_label("**Background:** Sepsis kills.") == ("Sepsis kills.", True)
    assert strip_facet_label("Results and conclusions - mortality fell.") == (
        "Mortality fell.",
        True,
    )
    assert strip_facet_label("Design-based sampling was used.") == (
        "Design-based sampling was used.",
        False,
    )
    assert strip_facet_label("Results were mixed.")[1] is False
