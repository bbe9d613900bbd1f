"""Pointers into an article that an abstract cannot carry: citations and display items.

An abstract stands alone: its reader has neither the reference list nor the figures.
A small model summarising a passage copies what the passage points at along with
what it says: citation markers ("[1]–[5]", "(Smith et al., 2019)"), parenthesised
display references ("(Table 2)", "(Fig. 3B)") and whole sentences about a display
item ("Baseline characteristics are shown in Table 1 and Figure 1.").
:func:`strip_pointers` removes the markers and a leading "As shown in Table 1,"
from a sentence; :func:`points_to_display` tells whether what is left still reads
only with the article's tables or figures beside it.
"""

from __future__ import annotations

import re

from veriscribe.text.sentences import sentences_of

__all__ = [
    "display_sentences",
    "numbered_citations",
    "pointer_count",
    "points_to_display",
    "strip_numbered_citations",
    "strip_pointers",
]

_RANGE = r"\s*(?:[,;\u2013\u2014-]|and|&)\s*"
_NUMBER = r"S?\d+[A-Za-z]?(?:\s*[\u2013-]\s*[A-Za-z])?"
_DISPLAY = (
    r"(?:(?i:supplementary|supporting|additional|extended\s+data)\s+)?"
    r"(?i:tables?|fig(?:ure)?s?\.?|boxe?s?|appendix|appendices|files?|videos?)"
    rf"\s+{_NUMBER}(?:{_RANGE}(?:(?i:tables?|fig(?:ure)?s?\.?)\s+)?{_NUMBER})*"
)
# A parenthesis that opens with a display item: "(Table 2)", "(see Fig. 3B)",
# "(Figure 2A, Figure 2\u2014figure supplement 1)", "[Figure 1 and Table S2]".
_PAREN_DISPLAY = re.compile(
    rf"\s*\((?:(?:see|cf\.|e\.g\.,?)\s+)?{_DISPLAY}[^()]*\)"
    rf"|\s*\[(?:(?:see|cf\.|e\.g\.,?)\s+)?{_DISPLAY}[^\[\]]*\]"
)
# A display item that closes a parenthesis of other words: "(R102K, Figure 6)".
_TRAILING_DISPLAY = re.compile(rf"\s*[,;]\s*(?:see\s+)?{_DISPLAY}[^()]*(?=\))")
# "[1]", "[2, 5]", "[3]\u2013[7]", "[1-4,9]", "[34], [38]".
_ONE_CITATION = r"\[\d{1,3}(?:" + _RANGE + r"\d{1,3})*\]"
_BRACKET_CITATION = re.compile(
    rf"\s*{_ONE_CITATION}(?:\s*[,;\u2013\u2014-]\s*{_ONE_CITATION})*"
)
# "(Smith et al., 2019)", "(Smith and Jones 2018; Lee, 2020a)".
_AUTHOR = r"[A-Z][\w'\u2019-]+(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][\w'\u2019-]+)?"
_AUTHOR_YEAR = re.compile(
    rf"\s*\((?:(?:see|e\.g\.,?)\s+)?{_AUTHOR},?\s+(?:19|20)\d\d[a-z]?"
    rf"(?:\s*[;,]\s*(?:{_AUTHOR},?\s+)?(?:19|20)\d\d[a-z]?)*\)"
)
# "As shown in Table 1, ..." and "As Figure 2 shows, ...".
_LEADING = re.compile(
    r"^(?:As\s+(?:is\s+)?(?:shown|seen|illustrated|summari[sz]ed|presented|depicted|"
    rf"reported|described|listed|detailed|indicated)\s+in\s+{_DISPLAY}"
    rf"|As\s+{_DISPLAY}\s+(?:shows?|illustrates?|indicates?)),\s*"
)
_MENTION = re.compile(rf"\b{_DISPLAY}\b")
# "(12)", "(1,6)", "(5\u20137)", "(21, 22)": a reference number, in an article that
# cites by number in parentheses (see `numbered_citations`).
_NUMBERED = re.compile(r"\s*\((?:\d{1,3}(?:\s*[,\u2013-]\s*\d{1,3})*)\)(?=[\s.,;:]|$)")
NUMBERED_STYLE = 5
"""Distinct "(n)" markers from which an article is read as citing by number."""
_PARENTHESIS = re.compile(r"\s*\(([^()]*)\)")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?)])")
_DOUBLE_PUNCT = re.compile(r"([,;])(?=[.,;:!?])")


def strip_pointers(sentence: str) -> tuple[str, int]:
    """Remove citation markers, parenthesised display references and a lead-in.

    Returns:
        The sentence without them, and how many were removed.
    """
    removed = 0
    text = sentence
    for pattern in (_BRACKET_CITATION, _AUTHOR_YEAR, _PAREN_DISPLAY, _TRAILING_DISPLAY):
        text, count = pattern.subn("", text)
        removed += count

    def wordy_display(match: re.Match[str]) -> str:
        # "(black triangles in Figure 1B)": a display item and no data.
        nonlocal removed
        inside = match.group(1)
        if _MENTION.search(inside) and not re.search(r"\d", _MENTION.sub("", inside)):
            removed += 1
            return ""
        return match.group(0)

    text = _PARENTHESIS.sub(wordy_display, text)
    text, count = _LEADING.subn("", text)
    if count:
        removed += count
        text = text[:1].upper() + text[1:]
    if removed:
        text = _DOUBLE_PUNCT.sub("", _SPACE_BEFORE_PUNCT.sub(r"\1", text)).strip()
    return text, removed


def numbered_citations(article: str) -> bool:
    """Tell whether an article cites its references by number in parentheses.

    "... in the southeastern US (5\u20137).": at least :data:`NUMBERED_STYLE`
    distinct such markers. Elsewhere "(12)" may be a count, and stays.
    """
    return len(set(m.group(0).strip() for m in _NUMBERED.finditer(article))) >= (
        NUMBERED_STYLE
    )


def strip_numbered_citations(sentence: str) -> str:
    """Remove "(12)"-style reference numbers from a sentence of such an article."""
    text, count = _NUMBERED.subn("", sentence)
    return text.strip() if count else sentence


def points_to_display(sentence: str) -> bool:
    """Tell whether a sentence names a table, figure or other display item."""
    return _MENTION.search(sentence) is not None


def pointer_count(text: str) -> int:
    """Count the citation markers and display references in a text."""
    total = 0
    for sentence in sentences_of(text):
        stripped, removed = strip_pointers(sentence)
        total += removed + len(_MENTION.findall(stripped))
    return total


def display_sentences(text: str) -> list[str]:
    """Return the sentences that still name a display item once markers are gone."""
    return [s for s in sentences_of(text) if points_to_display(strip_pointers(s)[0])]
