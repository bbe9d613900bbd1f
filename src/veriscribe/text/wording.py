"""Sentences of an abstract, and the word checks of ``veriscribe.checks.wording``.

The checks of case, script, content words and repetition live with the other
deterministic checks (the copy guard of the embedded model uses them too); splitting
an abstract into the sentences they are applied to needs the facet sentence rules.
"""

from __future__ import annotations

import re

from veriscribe.checks.wording import (
    STOP_WORDS,
    CaseIndex,
    case_changes,
    content_words,
    foreign_script_words,
    repair_case,
    repeated_trigram_share,
    scripts_of,
    word_count,
)
from veriscribe.text.facets import first_sentence

__all__ = [
    "CaseIndex",
    "STOP_WORDS",
    "case_changes",
    "content_words",
    "foreign_script_words",
    "repair_case",
    "repeated_trigram_share",
    "scripts_of",
    "sentences_of",
    "word_count",
]

_CONTINUES = re.compile(r"[a-z\[,;:)\]]")


def sentences_of(text: str) -> list[str]:
    """Split a text into its sentences, never cutting one; a paragraph ends one.

    A piece that cannot start a sentence (a lower-case word, a citation marker or a
    comma after "et al.") belongs to the sentence before it.
    """
    found: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        rest = " ".join(paragraph.split())
        pieces = []
        while rest:
            head = first_sentence(rest)
            if not head or len(head) >= len(rest):
                break
            pieces.append(head)
            rest = rest[rest.find(head) + len(head) :].strip()
        if rest:
            pieces.append(rest)
        start = len(found)
        for piece in pieces:
            if len(found) > start and _CONTINUES.match(piece):
                found[-1] = f"{found[-1]} {piece}"
            else:
                found.append(piece)
    return found
