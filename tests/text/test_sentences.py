from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pysbd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pysbd.lang.english import English

from veriscribe.documents.articles import Article, read_articles
from veriscribe.text.sentences import (
    _AbbreviationReplacer,
    _English,
    _plain_first_sentence,
    _segmented_first_sentence,
    claim_sentences,
    first_sentence,
    quotable_units,
    quote_text,
    sentence_span,
)
from veriscribe.text.sentences import _segmenter as segmenter


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Malaria kills. It is bad.", "Malaria kills. It is bad."),  # too short: merged
        (
            "Malaria kills many children. Vaccines help.",
            "Malaria kills many children.",
        ),
        (
            "Patients aged 65 yr. or older were included. Others were not.",
            "Patients aged 65 yr. or older were included.",
        ),
        ("Fig. 1 shows the study design. Next.", "Fig. 1 shows the study design."),
        ("  A paragraph without an end  ", "A paragraph without an end"),
        ("", ""),
        ("   \n ", ""),
    ],
)
def test_first_sentence(text: str, expected: str) -> None:
    assert first_sentence(text) == expected


def test_first_sentence_of_a_long_paragraph() -> None:
    text = "The first sentence is here. " + "Filler words go on and on. " * 2000
    assert first_sentence(text) == "The first sentence is here."


def test_first_sentence_equals_pysbd_on_development_paragraphs(
    shared_data: Path,
) -> None:
    # The shortcuts (a plain end, a decimal point that ends nothing, a window of the
    # head) must give what pysbd gives on the whole head.
    files = sorted((shared_data / "articles" / "jats").glob("*.xml"))[:6]
    texts = [
        p.text
        for path in files
        for article in read_articles(path)
        if isinstance(article, Article)
        for p in article.paragraphs
    ]
    decimals = [t for t in texts if re.search(r"\d\.\d", t.strip()[:2000])]
    assert len(texts) > 300 and len(decimals) > 20
    for text in texts:
        head = text.strip()[:2000]
        assert first_sentence(text) == _segmented_first_sentence(head)[0]


def test_a_decimal_point_ends_no_sentence() -> None:
    text = "The pH was 7.5 in every sample we kept. Then 0.1% of it was lost."
    assert first_sentence(text) == "The pH was 7.5 in every sample we kept."
    assert _plain_first_sentence(text) == first_sentence(text)


def _spans(seg: pysbd.Segmenter, text: str) -> list[tuple[str, int, int]]:
    return [(s.sent, s.start, s.end) for s in seg.segment(text)]


def test_segmenter_spans_equal_pysbd_on_development_paragraphs(
    shared_data: Path,
) -> None:
    plain = pysbd.Segmenter(language="en", clean=False, char_span=True)
    files = sorted((shared_data / "articles" / "jats").glob("*.xml"))[:1]
    heads = [
        p.text[:size]
        for path in files
        for article in read_articles(path)
        if isinstance(article, Article)
        for p in article.paragraphs
        for size in (400, 2000)
    ]
    assert len(heads) > 50
    for head in heads:
        assert _spans(segmenter(), head) == _spans(plain, head)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                ["Yes.", "Yes. No.", "Dr. Smith came.", "It is (i.e. so).", ""]
            ),
            st.sampled_from(["", " ", "  ", "\n", " \t"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_segmenter_spans_equal_pysbd_on_repeated_sentences(
    parts: list[tuple[str, str]],
) -> None:
    # The same sentence twice must take its second occurrence, as pysbd's regex does.
    plain = pysbd.Segmenter(language="en", clean=False, char_span=True)
    text = "".join(sentence + space for sentence, space in parts)
    assert _spans(segmenter(), text) == _spans(plain, text)


@pytest.mark.parametrize(
    "text",
    [
        "We also saw all the data al. 2010 and al. 2011 showed, as al. et al. did. "
        "Also, almost all were there. Fig. 2 shows it, as fig. 3 does.",
        "Doses no. 5 and no. 6 were given, as were No. 7 and No. 8. Dr. Smith and "
        "dr. Jones agreed with dr. Lee.",
    ],
)
def test_equal_abbreviation_occurrences_are_rewritten_once(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = pysbd.Segmenter(language="en", clean=False, char_span=True)
    rewrites: list[str] = []
    scan = pysbd.abbreviation_replacer.AbbreviationReplacer.scan_for_replacements

    def counted(self: Any, txt: str, am: str, ind: int, chars: list[str]) -> str:
        rewrites.append(am)
        return scan(self, txt, am, ind, chars)

    monkeypatch.setattr(
        pysbd.abbreviation_replacer.AbbreviationReplacer,
        "scan_for_replacements",
        counted,
    )
    expected = [(s.sent, s.start, s.end) for s in plain.segment(text)]
    by_pysbd = len(rewrites)
    rewrites.clear()
    assert [(s.sent, s.start, s.end) for s in segmenter().segment(text)] == expected
    assert len(rewrites) == len(set(rewrites)) < by_pysbd


def _development_lines(shared_data: Path) -> list[str]:
    """Return every line of the development articles' paragraphs and guidelines."""
    articles = shared_data / "articles"
    texts = [
        p.text
        for path in [*sorted((articles / "jats").glob("*.xml")), articles / "pcd.jsonl"]
        for article in read_articles(path)
        if isinstance(article, Article)
        for p in article.paragraphs
    ]
    guidelines = shared_data / "guidelines"
    texts += [p.read_text(encoding="utf-8") for p in sorted(guidelines.glob("*/*.md"))]
    with (guidelines / "cpgqa" / "passages.jsonl").open(encoding="utf-8") as lines:
        texts += [json.loads(line)["text"] for line in lines]
    return list(dict.fromkeys(line for t in texts for line in t.splitlines(True)))


def test_abbreviation_replacer_equals_pysbd_on_development_texts(
    shared_data: Path,
) -> None:
    # Its shortcuts (equal occurrences rewritten once, only the abbreviations that
    # end a word on a period looked for) must leave every line as pysbd's does.
    lines = _development_lines(shared_data)
    assert len(lines) > 20_000
    ours = _AbbreviationReplacer("", _English)
    theirs = English.AbbreviationReplacer("", English)
    for line in lines:
        expected = theirs.search_for_abbreviations_in_string(line)
        assert ours.search_for_abbreviations_in_string(line) == expected, line


@pytest.mark.parametrize(
    "text",
    [
        "The total. Al. Smith et al. found it (al. 2010), as did ſt. Paul and St. Kitts.",
        "Of the group. P. 12 and p. 13 show it; v. 2 and V. 3 too, but not in fig.",
        "An İd. or an ıd. and a Kelvin K. are rare.",
    ],
)
def test_abbreviation_replacer_equals_pysbd_on_odd_letters(text: str) -> None:
    ours = _AbbreviationReplacer("", _English)
    theirs = English.AbbreviationReplacer("", English)
    assert ours.search_for_abbreviations_in_string(
        text
    ) == theirs.search_for_abbreviations_in_string(text)


def test_claim_sentences_read_with_the_faster_segmenter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "Dr. Smith gave 5 mg. Patients improved (i.e. most did). Fig. 2 shows it."
    expected = claim_sentences(text)
    assert [s.text for s in expected] == [
        "Dr. Smith gave 5 mg.",
        "Patients improved (i.e. most did).",
        "Fig. 2 shows it.",
    ]
    monkeypatch.setattr(
        "veriscribe.text.sentences._Segmenter",
        lambda: pysbd.Segmenter(language="en", clean=False, char_span=True),
    )
    assert claim_sentences(text) == expected


# -------------------------------------------------------------------- naive split


# ---------------------------------------------------------------- claim sentences


def test_claim_sentences_keep_their_offsets_across_paragraphs() -> None:
    text = "  First sentence is long enough.\n\n\nSecond one is long enough too.  "
    sentences = claim_sentences(text)
    assert [text[s.start : s.end] for s in sentences] == [s.text for s in sentences]
    assert [s.text for s in sentences] == [
        "First sentence is long enough.",
        "Second one is long enough too.",
    ]


# ----------------------------------------------------------------- quotable units


def test_quotable_units_join_hard_wrapped_lines_and_split_bullets() -> None:
    text = (
        "Clinicians should assess pain\nat every visit. Document it.\n"
        "- Use a validated scale for adults\n- Reassess after each change of dose\n\n"
        "Page 12"
    )
    units = quotable_units(text)
    assert [u.text for u in units] == [
        "Clinicians should assess pain at every visit.",
        "- Use a validated scale for adults",
        "- Reassess after each change of dose",
    ]
    for unit in units:
        assert quote_text(text, unit.start, unit.end) == unit.text


# ------------------------------------------------------- sentences around a span


def context(text: str, quote: str) -> str:
    start = text.index(quote)
    begin, end = sentence_span(text, (start, start + len(quote)))
    return text[begin:end]


def test_sentence_span_expands_to_the_sentence() -> None:
    text = "First comes this. Avoid aspirin in children under 16 years. Then more."
    assert context(text, "aspirin in children") == (
        "Avoid aspirin in children under 16 years."
    )


def test_sentence_span_keeps_a_semicolon_clause_in_the_sentence() -> None:
    text = (
        "Avoid aspirin in children under 16 years; in adults with coronary disease, "
        "aspirin is recommended for secondary prevention."
    )
    assert context(text, "aspirin is recommended") == text


def test_sentence_span_covers_every_sentence_the_span_touches() -> None:
    text = "One. Avoid drug A in renal failure. Use drug B instead. Two."
    assert context(text, "renal failure. Use drug B") == (
        "Avoid drug A in renal failure. Use drug B instead."
    )


def test_sentence_span_skips_abbreviations_decimals_and_references() -> None:
    text = (
        "Intro text. Use a statin (e.g. Atorvastatin) at 2.5 mg daily. "
        "It works.[12] Next sentence."
    )
    assert context(text, "at 2.5 mg") == (
        "Use a statin (e.g. Atorvastatin) at 2.5 mg daily."
    )
    assert context(text, "Next") == "Next sentence."


def test_sentence_span_of_a_list_item_includes_its_lead_in() -> None:
    text = (
        "Some text before.\n"
        "Do not give the following:\n"
        "- aspirin in children\n"
        "- ibuprofen in late pregnancy\n"
        "\n"
        "Other text."
    )
    assert context(text, "ibuprofen") == (
        "Do not give the following:\n- aspirin in children\n"
        "- ibuprofen in late pregnancy"
    )


def test_sentence_span_of_a_pdf_list_includes_its_lead_in() -> None:
    text = (
        "Successful implementation of this CPG will:\n"
        "•\n\nAssess the patient’s condition and\ncollaborate with caregivers\n\n"
        "•\n\nMinimize preventable complications\n\nNext paragraph."
    )
    assert context(text, "Minimize") == text[: text.index("\n\nNext")]


def test_sentence_span_of_a_list_item_without_a_lead_in() -> None:
    text = "Results.\n- first item here\n- second item here"
    assert context(text, "second") == "- second item here"
