"""The checks after refining: guidance, numbers, length and case, without a model."""

from __future__ import annotations

import pytest

from veriscribe.nodes.abstract.checks import (
    check_abstract,
    hold_length,
    refuse_patterns,
    sentences_of,
    word_count,
)
from veriscribe.text.replies import ABSTRACT_TOKENS, abstract_tokens

TOPICS = [
    "sepsis",
    "antibiotics",
    "mortality",
    "kidneys",
    "lactate",
    "fluids",
    "ventilation",
    "delirium",
    "platelets",
    "cultures",
    "vasopressors",
    "steroids",
]


def sentence(topic: str, words: int = 20) -> str:
    """A sentence of ``words`` words about one topic, unlike the others."""
    filler = [f"{topic}{chr(97 + i)}" for i in range(words - 3)]
    return f"The {topic} " + " ".join(filler) + " changed."


def facet(*topics: str) -> str:
    return " ".join(sentence(t) for t in topics)


# An article long enough for 250 words (at least twice as long).
BODY = "\n\n".join(
    facet(*TOPICS) + " Mortality was 18% at 28 days (P < 0.05)." for _ in range(3)
)
DRAFT = "\n\n".join(
    [facet("sepsis", "antibiotics"), facet("mortality", "kidneys", "lactate")]
    + [facet("fluids", "ventilation"), facet("delirium", "platelets", "cultures")]
)


def test_the_output_budget_follows_the_asked_length_within_bounds() -> None:
    assert abstract_tokens(250) == round(1.4 * 300) + 16
    assert abstract_tokens(100) < abstract_tokens(250) < abstract_tokens(400)
    assert abstract_tokens(5) == 96
    assert abstract_tokens(5000) == 1200
    assert abstract_tokens(0) == ABSTRACT_TOKENS


def test_sentences_are_never_cut() -> None:
    text = "Cells grew (e.g. in 5 mM glucose). Fig. 2 shows it!\n\nNext part"
    assert sentences_of(text) == [
        "Cells grew (e.g. in 5 mM glucose).",
        "Fig. 2 shows it!",
        "Next part",
    ]


def test_a_long_abstract_is_trimmed_at_sentence_ends_to_within_20_percent() -> None:
    sentences = [sentence(t) for t in TOPICS[:10]]  # 10 x 20 = 200 words
    # and two that repeat the first in other words
    sentences += [sentence("sepsis").replace("changed", w) for w in ("rose", "fell")]
    kept, outcome, trimmed, added = hold_length(
        sentences, DRAFT.split("\n\n"), [], 150, 10_000
    )
    assert outcome == "trimmed" and added == []
    assert 120 <= word_count(" ".join(kept)) <= 180
    assert set(kept) | set(trimmed) == set(sentences)
    assert all(s in sentences for s in kept)  # whole sentences only
    # The opening and the closing sentence stay; the repeats go first.
    assert kept[0] == sentences[0] and kept[-1] == sentences[-1]
    assert trimmed[0] == sentences[10]
    assert [s for s in sentences if s in kept] == kept  # order kept


def test_a_short_abstract_gains_draft_sentences_beside_their_facet() -> None:
    facets = DRAFT.split("\n\n")
    spares = [(i, s) for i, f in enumerate(facets) for s in sentences_of(f)]
    sentences = [sentence("sepsis"), sentence("delirium")]  # 40 words of 100
    kept, outcome, trimmed, added = hold_length(sentences, facets, spares, 100, 10_000)
    assert outcome == "padded" and trimmed == []
    assert 80 <= word_count(" ".join(kept)) <= 120
    assert sentence("sepsis") not in added  # the abstract has it already
    # Each added sentence stands where its facet is: the methods-like facets
    # (fluids, ventilation) come before the delirium sentence.
    assert kept.index(sentence("delirium")) == len(kept) - 1 or all(
        kept.index(a) < kept.index(sentence("delirium"))
        for a in added
        if any(t in a for t in ("antibiotics", "mortality", "kidneys", "fluids"))
    )


def test_a_short_abstract_of_a_short_article_is_left_alone() -> None:
    sentences = [sentence("sepsis")]
    kept, outcome, _, added = hold_length(sentences, [DRAFT], [(0, "x y z.")], 250, 300)
    assert (kept, outcome, added) == (sentences, "brief_article", [])


def test_no_asked_length_leaves_the_length_alone() -> None:
    sentences = [sentence(t) for t in TOPICS]
    assert hold_length(sentences, [], [], 0, 10_000) == (sentences, "off", [], [])


def test_check_abstract_drops_echoes_and_wrong_numbers_and_repairs_case() -> None:
    abstract = (
        "Background: The Sepsis sepsisa sepsisb changed. "
        "The research gap and the motivation for the work are significant. "
        "Mortality was 19% at 28 days (P < 0.05). "
        "The Kidneys kidneysa changed."
    )
    draft = "Mortality was 18% at 28 days (P < 0.05).\n\nThe kidneys kidneysa changed."
    text, record, fallbacks = check_abstract(abstract, draft, BODY, 0)
    assert text == (
        "The sepsis sepsisa sepsisb changed. "
        "Mortality was 18% at 28 days (P < 0.05). "
        "The kidneys kidneysa changed."
    )
    assert record["labels_stripped"] == 1
    assert record["guidance_dropped"] == [
        "The research gap and the motivation for the work are significant."
    ]
    assert record["numbers_dropped"] == ["Mortality was 19% at 28 days (P < 0.05)."]
    assert record["numbers_replaced"] == ["Mortality was 18% at 28 days (P < 0.05)."]
    assert record["number_precision"] == pytest.approx(2 / 3)
    assert record["case_repairs"] == ["Sepsis", "Kidneys"]
    assert record["length"] == "off"
    assert [f.split(":")[0] for f in fallbacks] == [
        "guidance_dropped",
        "numbers_dropped",
    ]


def test_a_wrong_number_with_no_close_draft_sentence_is_dropped() -> None:
    abstract = "The sepsisa changed. Platelets rose by 77% in 3 weeks."
    text, record, _ = check_abstract(abstract, "The sepsisa changed.", BODY, 0)
    assert text == "The sepsisa changed."
    assert record["numbers_replaced"] == []
    assert record["numbers_dropped"] == ["Platelets rose by 77% in 3 weeks."]


def test_check_abstract_holds_the_length_and_reports_it() -> None:
    more = [f"q{t}" for t in TOPICS[:6]]
    abstract = " ".join(sentence(t) for t in TOPICS + more)  # 360 words
    text, record, fallbacks = check_abstract(abstract, DRAFT, BODY * 2, 250)
    assert 200 <= record["words"] <= 300 == 300
    assert record["words"] == word_count(text)
    assert record["length"] == "trimmed" and record["trimmed"]
    assert fallbacks == [
        f"length_trimmed: {len(record['trimmed'])} sentences dropped to "
        f"{record['words']} words"
    ]


def test_an_abstract_with_nothing_left_keeps_the_model_text() -> None:
    abstract = "The research gap and the motivation for the work are significant."
    text, record, _ = check_abstract(abstract, "", "A short article.", 250)
    assert text == abstract
    assert record["guidance_dropped"] == [abstract]


def test_trimming_keeps_the_sentences_that_give_numbers() -> None:
    data = "The mortality fell to 18% at 28 days in the sepsis trial cohort overall."
    sentences = [sentence(t) for t in TOPICS[:6]]
    sentences.insert(len(sentences) - 1, data)  # where a tail trim would cut first
    kept, outcome, trimmed, _ = hold_length(sentences, [], [], 80, 10_000)
    assert outcome == "trimmed" and data in kept and data not in trimmed


def test_a_citation_after_et_al_stays_in_its_sentence() -> None:
    text = "It was shown by Lombardi et al. [1], which led to a virus. 28 died."
    assert sentences_of(text) == [
        "It was shown by Lombardi et al. [1], which led to a virus.",
        "28 died.",
    ]


JUSTIFIED = [
    "This is justified by the sepsis sepsisa trial.",
    "Lactate fell in the fluids group.",
    "This is justified by the kidneys kidneysa data.",
    "This is justified by the delirium deliriuma scores.",
]


def test_sentences_repeating_an_opening_are_dropped_after_the_first() -> None:
    kept, dropped, replaced = refuse_patterns(JUSTIFIED, [])
    assert kept == JUSTIFIED[:2]
    assert dropped == JUSTIFIED[2:]
    assert replaced == []


def test_a_sentence_repeating_most_of_an_earlier_ones_wording_is_dropped() -> None:
    first = "The research gap in sepsis care is the lack of early lactate testing."
    again = "Early on, the research gap in sepsis care is the lack of early lactate."
    kept, dropped, _ = refuse_patterns([first, again], [])
    assert (kept, dropped) == ([first], [again])


def test_a_repeated_pattern_is_replaced_by_the_closest_draft_sentence() -> None:
    spare = "Kidneys kidneysa recovered in most patients."
    opening_again = "This is justified by the sepsis sepsisa trial and others."
    kept, dropped, replaced = refuse_patterns(
        [*JUSTIFIED[:3], opening_again], [JUSTIFIED[0], spare]
    )
    assert dropped == [JUSTIFIED[2], opening_again]
    # The spare repeating the pattern is never used; the one about kidneys is.
    assert replaced == [spare]
    assert kept == [*JUSTIFIED[:2], spare]


def test_check_abstract_records_the_refused_patterns() -> None:
    abstract = " ".join(JUSTIFIED)
    text, record, fallbacks = check_abstract(abstract, "", BODY, 0)
    assert text == " ".join(JUSTIFIED[:2])
    assert record["patterns_dropped"] == JUSTIFIED[2:]
    assert record["patterns_replaced"] == []
    assert fallbacks == [
        "patterns_dropped: 2 sentences repeated an earlier sentence's opening or "
        "wording (0 replaced by facet-summary sentences)"
    ]


def test_citations_and_display_references_never_reach_the_reader() -> None:
    abstract = (
        "The sepsis sepsisa changed [1]\u2013[3]. "
        "Baseline characteristics are shown in Table 1 and Figure 1. "
        "Mortality was 18% at 28 days (Table 2)."
    )
    draft = "The kidneys kidneysa changed (Fig. 2).\n\nThe sepsis sepsisa changed."
    text, record, fallbacks = check_abstract(abstract, draft, BODY, 0)
    assert text == "The sepsis sepsisa changed. Mortality was 18% at 28 days."
    assert record["pointers_removed"] == 2
    assert record["pointers_dropped"] == [
        "Baseline characteristics are shown in Table 1 and Figure 1."
    ]
    assert [f.split(":")[0] for f in fallbacks] == [
        "pointers_removed",
        "pointers_dropped",
    ]


def test_a_bent_word_is_put_back_and_reported() -> None:
    body = BODY + "\n\nPatients on systemic glucocorticoids were excluded."
    abstract = "Those on systematic glucocorticoids were excluded."
    text, record, fallbacks = check_abstract(abstract, "", body, 0)
    assert text == "Those on systemic glucocorticoids were excluded."
    assert record["word_repairs"] == ["systematic -> systemic"]
    assert fallbacks == [
        "words_mended: 1 words put back as the article writes them "
        "(systematic -> systemic)"
    ]


def test_a_sentence_ending_on_a_dangling_word_ends_before_it() -> None:
    abstract = "The sepsis sepsisa changed, and. The kidneys kidneysa changed."
    text, record, fallbacks = check_abstract(abstract, "", BODY, 0)
    assert text == "The sepsis sepsisa changed. The kidneys kidneysa changed."
    assert record["endings_mended"] == 1
    assert fallbacks == ["endings_mended: 1 sentences ended on a dangling word"]
