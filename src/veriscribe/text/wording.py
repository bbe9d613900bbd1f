"""The sentences of an abstract, as the word and abstract checks read them.

Splitting needs the facet sentence rules, which ``veriscribe.checks.wording`` (below
the model layer, for the copy guard) cannot import.
"""

from __future__ import annotations

import re

from veriscribe.text.facets import first_sentence

__all__ = ["sentences_of"]

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
