"""Tests for the default section retriever (BM25 with context, phrases and best unit)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from qa_helpers import CORPUS, add_fixture_corpus, section_row
from veriscribe.retrieval.bm25 import BM25Index
from veriscribe.retrieval.fused import (
    BACK_MATTER,
    FusedIndex,
    SectionDoc,
    dense_units,
    pairs,
    section_docs,
    stored_vectors,
)
from veriscribe.store import corpora
from veriscribe.store.connect import open_database


def doc(key: str, text: str, *, title: str = "", context: str = "") -> SectionDoc:
    return SectionDoc(key=key, context=context, title=title, text=text)


def bm25_top(sections: list[SectionDoc], query: str) -> str:
    index = BM25Index().build(
        [s.key for s in sections], [f"{s.title}\n{s.text}" for s in sections]
    )
    return index.search(query, 1)[0][0]


def fused_top(sections: list[SectionDoc], query: str) -> str:
    return FusedIndex(sections).search(query, 1)[0][0]


def test_pairs_are_adjacent_stems() -> None:
    assert pairs(["overdos", "educ", "naloxon"]) == ["overdos_educ", "educ_naloxon"]
    assert pairs(["one"]) == []


def test_the_section_holding_the_phrase_wins_over_the_words_apart() -> None:
    sections = [
        doc("apart", "Provide education on overdose."),
        doc(
            "phrase",
            "Provide overdose education to patients.",
        ),
        doc("other", "Naloxone kits are stocked in every clinic pharmacy."),
    ]
    question = "Whom to provide overdose education?"
    assert bm25_top(sections, question) == "apart"  # the shorter section
    assert fused_top(sections, question) == "phrase"


def test_the_document_title_and_headings_pick_the_guideline() -> None:
    sections = [
        doc(
            "neck:psych",
            "Psychological treatment should start within six weeks.",
            title="Psychological treatment",
            context="Management of neck pain\nTherapeutic procedures",
        ),
        doc(
            "headache:psych",
            "Psychological treatment may start when the pain persists.",
            title="Psychological treatment",
            context="Management of headache\nTherapeutic procedures",
        ),
        doc(
            "neck:title",
            "Management of neck pain in workers.",
            title="Guideline title",
            context="Management of neck pain\nGeneral",
        ),
    ]
    question = "When should psychological treatment start for neck pain?"
    assert bm25_top(sections, question) == "headache:psych"
    assert fused_top(sections, question) == "neck:psych"


def test_the_best_sentence_lifts_a_long_section() -> None:
    filler = " ".join(
        f"Clinic note {n} covers scheduling, staffing and records." for n in range(4)
    )
    sections = [
        doc("long", f"{filler} Taper slowly when the daily dose is high. {filler}"),
        doc("short", "A high fever is treated first; the dose is taken daily."),
        doc("other", "Staffing of the clinic is reviewed yearly."),
    ]
    question = "Taper when the daily dose is high?"
    assert bm25_top(sections, question) == "short"
    assert fused_top(sections, question) == "long"


def test_no_shared_word_finds_nothing() -> None:
    index = FusedIndex([doc("a", "Statins lower cholesterol."), doc("b", "")])
    assert index.search("zebra crossings", 5) == []
    assert index.search("statins", 0) == []
    assert [key for key, _ in index.search("statins", 5)] == ["a"]


def test_keys_must_be_unique_and_present() -> None:
    with pytest.raises(ValueError, match="unique"):
        FusedIndex([doc("a", "x"), doc("a", "y")])
    with pytest.raises(ValueError, match="no sections"):
        FusedIndex([])


def test_section_docs_carry_the_document_title_and_heading_path() -> None:
    rows = [
        section_row("g:recs", "", "Recommendations"),
        section_row("g:recs/diet", "t" * 10, "Diet", parent="recs"),
        section_row("g:recs/diet/salt", "t" * 5, "Salt", parent="recs/diet"),
    ]
    found = section_docs(rows, {"g": "Hypertension guideline"})
    assert [(s.key, s.context, s.title) for s in found] == [
        ("g:recs/diet", "Hypertension guideline\nRecommendations", "Diet"),
        ("g:recs/diet/salt", "Hypertension guideline\nRecommendations\nDiet", "Salt"),
    ]


@pytest.mark.parametrize(
    "title",
    ["References", "Bibliography", "Appendix L: Abbreviations", "Abbreviation List"],
)
def test_back_matter_titles(title: str) -> None:
    assert BACK_MATTER.match(title)


@pytest.mark.parametrize("title", ["Diet", "Referral to a specialist", "Abbreviated"])
def test_other_titles_are_not_back_matter(title: str) -> None:
    assert not BACK_MATTER.match(title)


def test_a_reference_list_does_not_win_by_one_cited_title() -> None:
    references = "\n".join(
        [
            "Smith J. Dietary approaches to lower high blood pressure. BMJ. 2001.",
            *(
                f"Author {n}. A trial of statins in older adults. 2010."
                for n in range(8)
            ),
        ]
    )
    body = "Offer the DASH diet. Review the plan at each visit. " * 2
    sections = [
        doc("refs", references, title="References"),
        doc("diet", body, title="Dietary modifications"),
        doc("salt", "Reduce salt intake in all adults.", title="Sodium"),
    ]
    question = "Which diet is recommended for high blood pressure?"
    assert fused_top(sections, question) == "diet"
    as_body = [doc("refs", references, title="Cited works"), *sections[1:]]
    assert fused_top(as_body, question) == "refs"


def test_a_corpus_of_back_matter_alone_is_searched_by_section() -> None:
    index = FusedIndex([doc("r", "Smith J. Statins. 2001.", title="References")])
    assert [key for key, _ in index.search("statins", 3)] == ["r"]


# --- meaning: sentence vectors ------------------------------------------------------


class KeywordEncoder:
    """A fake encoder: texts naming a kind of co-use point one way, the rest another."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        rows = np.zeros((len(texts), 2), dtype=np.float32)
        for row, text in enumerate(texts):
            together = any(w in text.lower() for w in ("together", "concurrent"))
            rows[row, 0 if together else 1] = 1.0
        return rows


MEANING = [
    doc("co", "Avoid prescribing opioids with other medicines concurrently."),
    doc("home", "Keep opioids prescribed for a child with the other medicines."),
]


def test_the_closest_sentence_by_meaning_can_lift_a_section() -> None:
    question = "Can opioids be prescribed together with other medicines?"
    assert fused_top(MEANING, question) == "home"  # more of the question's words
    index = FusedIndex(MEANING, KeywordEncoder())
    assert index.search(question, 1)[0][0] == "co"


def test_back_matter_and_short_units_get_no_vector() -> None:
    references = doc("r", "Smith J. Opioids taken together. 2001.", title="References")
    short = doc("s", "Together.\nOpioids taken together are risky.")
    assert dense_units(references) == []
    assert dense_units(short) == ["Opioids taken together are risky."]
    index = FusedIndex([references, short], KeywordEncoder())
    assert index.search("opioids together", 1)[0][0] == "s"


def test_vectors_given_must_match_the_sections() -> None:
    with pytest.raises(ValueError, match="1 vector sets for 2 sections"):
        FusedIndex(MEANING, KeywordEncoder(), [np.zeros((1, 2), dtype=np.float32)])


async def test_vectors_are_stored_once_and_made_again_for_changed_text(
    default_db: str,
) -> None:
    async with await open_database(default_db) as store:
        await add_fixture_corpus(store)
        rows = await corpora.sections(store, CORPUS, with_text=True)
        found = section_docs(rows, {})
        encoder = KeywordEncoder()
        first = await stored_vectors(store, CORPUS, found, encoder)
        made = len(encoder.texts)
        assert made == sum(len(dense_units(section)) for section in found) > 0
        again = await stored_vectors(store, CORPUS, found, encoder)
        assert len(encoder.texts) == made  # read back, not made again
        for one, other in zip(first, again, strict=True):
            assert np.allclose(one, other, atol=1e-3)  # stored as float16
        edited = [dataclasses.replace(found[0], text=found[0].text + " Added here.")]
        await stored_vectors(store, CORPUS, edited + found[1:], encoder)
        assert encoder.texts[made:] == dense_units(edited[0])


def test_a_misspelt_word_of_the_question_is_read_as_the_corpus_spells_it() -> None:
    sections = [
        doc("t", "Opioid therapy should start at the lowest dose."),
        doc("o", "Opioid use disorder is treated with buprenorphine."),
    ]
    index = FusedIndex(sections)
    assert index.spelled(["opioid", "thrapi", "buprenorphin", "xyzzyq"]) == [
        "opioid",
        "therapi",
        "buprenorphin",
        "xyzzyq",
    ]
    assert index.search("How should opioid thrapy start?", 1)[0][0] == "t"


def test_the_section_defining_the_term_asked_about_outranks_its_users() -> None:
    sections = [
        doc(
            "uses",
            "Keep the MEDD low. Recheck the MEDD monthly; a MEDD of 90 or more is high. "
            "Taper when the MEDD rises.",
        ),
        doc(
            "defines",
            "MEDD refers to the morphine equivalent daily dose of all opioids.",
        ),
        doc("other", "Naloxone is offered to every patient on opioids."),
    ]
    index = FusedIndex(sections)
    assert index.search("What is MEDD?", 1)[0][0] == "defines"
    # Without a definition question the section using the term most still wins.
    assert index.search("MEDD", 1)[0][0] == "uses"
