"""Quality gates for generated retrieval questions.

A synthetic question is only useful for measuring retrieval if finding its source
section takes reading the question, not matching a label. Each gate returns a reason
when the question fails it:

- ``not_a_question``: empty, fewer than four words, or no question mark.
- ``title_copy``: the question is the section title restated: nearly the same string,
  or almost all of its content words come from the title, so that copying the
  title answers "which section is this about?".
- ``verbatim_copy``: the question quotes the section at length: a run of
  ``QUOTE_WORDS`` or more consecutive words of the section text.
- ``names_guideline``: the question names the guideline by its id (or its full title of
  three or more words). An id that is a plain word (``hypertension``) is not a name.
- ``refers_to_source``: the question points at "this section", "the passage", "the
  guideline above" and the like, which no reader of the question alone can resolve.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from veriscribe.text.tokens import question_words

__all__ = ["GATES", "QUOTE_WORDS", "GateInput", "check_question", "content_words"]

GATES = (
    "not_a_question",
    "title_copy",
    "verbatim_copy",
    "names_guideline",
    "refers_to_source",
)
QUOTE_WORDS = 10
"""A run of this many consecutive section words in a question is a verbatim copy."""
TITLE_SIMILARITY = 85
"""rapidfuzz ratio (0-100) between question and title at which it is a restatement."""
TITLE_SHARE = 0.8
"""Share of the question's content words found in the title at which it is a copy."""
MIN_WORDS = 4

_STOP = frozenset(
    """a an the of for to in on at by with without from and or but nor is are was were be
    been being do does did has have had can could should would may might must will shall
    what which who whom whose when where why how whether if than then that this these those
    there their it its i me my we our you your he she his her they them patient patients
    about any some all more most less least into over under per as not no yes so such
    recommend recommended recommendation recommendations guideline guidelines""".split()
)
_SOURCE_REFERENCE = re.compile(
    r"\b(?:this|the above|the following|the given|the provided|the preceding|the"
    r" previous) (?:section|passage|text|excerpt|paragraph|document|guideline|table)\b"
    r"|\b(?:according to|based on|per|in) the (?:section|passage|text|excerpt|paragraph"
    r"|document)\b",
    re.IGNORECASE,
)


def content_words(text: str) -> list[str]:
    """Return the lower-cased words of ``text`` that are not function words."""
    return [w for w in question_words(text) if w not in _STOP and not w.isdigit()]


@dataclass(frozen=True)
class GateInput:
    """What a question is checked against: its section and its document."""

    section_title: str
    section_text: str
    doc_id: str
    doc_title: str = ""


def _longest_shared_run(question: Sequence[str], text: Sequence[str]) -> int:
    """Return the longest run of consecutive words the question shares with the text."""
    if not question or not text:
        return 0
    longest = 0
    previous = [0] * (len(text) + 1)
    for q in question:
        current = [0] * (len(text) + 1)
        for j, t in enumerate(text, 1):
            if q == t:
                current[j] = previous[j - 1] + 1
                longest = max(longest, current[j])
        previous = current
    return longest


def _distinctive(doc_id: str) -> bool:
    """Tell whether an id is a name, not a plain word (``hypertension`` is not one)."""
    return bool(re.search(r"[\d_.-]", doc_id)) or doc_id not in (
        doc_id.lower(),
        doc_id.capitalize(),
    )


def _names(question: str, name: str) -> bool:
    words = question_words(name)
    if not words:
        return False
    pattern = r"\b" + r"\W*".join(map(re.escape, words)) + r"\b"
    return re.search(pattern, question, re.IGNORECASE) is not None


def check_question(question: str, source: GateInput) -> list[str]:
    """Return the gates the question fails, in ``GATES`` order (empty: it passes)."""
    failed: list[str] = []
    words = question_words(question)
    if len(words) < MIN_WORDS or "?" not in question:
        failed.append("not_a_question")
    title = source.section_title.strip()
    if title:
        asked = content_words(question)
        in_title = set(content_words(title))
        share = sum(w in in_title for w in asked) / len(asked) if asked else 1.0
        similar = (
            fuzz.ratio(question.lower().rstrip("?. "), title.lower())
            >= TITLE_SIMILARITY
        )
        if similar or share >= TITLE_SHARE:
            failed.append("title_copy")
    if _longest_shared_run(words, question_words(source.section_text)) >= QUOTE_WORDS:
        failed.append("verbatim_copy")
    doc_title_words = len(question_words(source.doc_title))
    if (_distinctive(source.doc_id) and _names(question, source.doc_id)) or (
        doc_title_words >= 3 and _names(question, source.doc_title)
    ):
        failed.append("names_guideline")
    if _SOURCE_REFERENCE.search(question):
        failed.append("refers_to_source")
    return failed
