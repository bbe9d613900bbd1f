"""Questions that ask what a term means, and the sentences that define it.

"What is MEDD?" or "Define pain according to the guideline." ask for a definition, and
the section that answers is the one that defines the term ("MEDD refers to morphine
equivalent daily dose", "Pain is defined as ..."), not the many sections that use it.
Words alone rank the users above the definer: the term is all the question holds, and
a section that uses it often scores higher. `defined_term` reads the term a question
asks to define (none for any other question) and `defines` tells whether a text defines
it, by the forms a definition takes in guidelines: "T is defined as", "T refers to",
"T stands for", "T means", "the definition of T", and for an abbreviation its expansion
in brackets beside it ("T (expansion)", "expansion (T)").
"""

from __future__ import annotations

import re
from functools import lru_cache

MAX_TERM_WORDS = 3
"""A longer "what is ..." asks about something, not for a term's meaning."""

_ARTICLE = r"(?:(?:an?|the)\s+)?"
_NAMING = r"(?:(?:term|word|phrase|abbreviation|acronym)\s+)?"
""""the term chronic pain", "the abbreviation SUD": the term is what follows."""
_TERM = r"(?P<term>[^\s?.!,;:][^?.!,;:]*?)"
_END = r"\s*[?.!]?\s*$"
_ASKS = [
    re.compile(rf"^\s*what\s+is\s+meant\s+by\s+{_ARTICLE}{_NAMING}{_TERM}{_END}", re.I),
    re.compile(
        rf"^\s*what\s+(?:does|do)\s+{_ARTICLE}{_NAMING}{_TERM}\s+"
        rf"(?:mean|stand\s+for|refer\s+to){_END}",
        re.I,
    ),
    re.compile(
        rf"^\s*(?:define|(?:what\s+is\s+)?the\s+definition\s+of)\s+{_ARTICLE}{_NAMING}{_TERM}"
        rf"(?:\s+(?:according\s+to|in|as\s+per|as\s+used\s+in|by|for)\s+[^?]*)?{_END}",
        re.I,
    ),
    re.compile(
        rf"^\s*(?:what|who)\s+(?:is|are)\s+{_ARTICLE}{_NAMING}{_TERM}{_END}", re.I
    ),
]
_ABBREVIATION = re.compile(r"^[A-Z][A-Za-z0-9/&-]*[A-Z0-9][a-z]?$")
"""An abbreviation: two or more capitals or digits, perhaps a plural s ("MEDD",
"VA/DoD", "NSAIDs")."""


def defined_term(question: str) -> str | None:
    """Return the term a question asks to define, or None for any other question."""
    for pattern in _ASKS:
        match = pattern.match(question)
        if match is None:
            continue
        term = match["term"].strip()
        if 0 < len(term.split()) <= MAX_TERM_WORDS:
            return term
    return None


@lru_cache(maxsize=256)
def _definition(term: str) -> re.Pattern[str]:
    words = r"\s+".join(re.escape(word) for word in term.split())
    # The term opens a sentence or clause, or follows an article or "term": "chronic
    # pain is defined as" does not define "pain".
    opens = (
        r"(?:^\s*|(?<=[.;:!?(\[\"\u201c'])\s*"
        r"|\b(?:[Tt]he|[Aa]n?|[Tt]erm|[Ww]ord|[Aa]bbreviation|[Aa]cronym)\s+)"
    )
    named = rf"{opens}{words}(?![\w-])"
    forms = [
        rf"{named}\s+(?:is|are)\s+(?:defined|described)\s+as\b",
        rf"{named}\s+(?:refers?\s+to|stands?\s+for|means)\b",
        rf"\bdefinition\s+of\s+{_ARTICLE}{words}(?![\w-])",
    ]
    flags = re.M | (0 if _ABBREVIATION.match(term) else re.I)
    return re.compile("|".join(forms), flags)


@lru_cache(maxsize=256)
def _bracketed(term: str) -> re.Pattern[str]:
    """Match the abbreviation beside its expansion in brackets, either way round.

    The expansion starts with the abbreviation's first letter.
    """
    first = re.escape(term[0])
    words = re.escape(term)
    return re.compile(
        rf"(?<![\w-]){words}\s*\(\s*(?i:{first})[a-z-]*\s[^()]*\)"
        rf"|(?i:\b{first})[\w-]*(?:\s+[\w-]+){{0,{len(term) + 2}}}\s+\(\s*{words}\s*\)"
    )


def defines(text: str, term: str) -> bool:
    """Return whether the text defines the term (see the module notes)."""
    if _definition(term).search(text) is not None:
        return True
    return (
        _ABBREVIATION.match(term) is not None
        and _bracketed(term).search(text) is not None
    )
