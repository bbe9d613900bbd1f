"""Words of an abstract against its article: case, script, content words, repetition.

A small model that is kept from copying its source rewords in ways a reader notices
at once: a word capitalised mid-sentence that the article writes in lower case ("may
be Highly Relevant"), a letter of another script in place of a Latin one, the same
phrase again and again. These helpers find them; :func:`repair_case` mends the first.

A word is *mid-sentence* unless it is the first word of its paragraph or follows a
sentence end (``.``, ``!``, ``?``, ``:``, possibly with a quote or bracket between).
The article's own sentence-initial capitals say nothing about a word, so only its
mid-sentence spellings count as evidence that a word is a name.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = [
    "CaseIndex",
    "STOP_WORDS",
    "case_changes",
    "content_words",
    "foreign_script_words",
    "repair_case",
    "repeated_trigram_share",
    "scripts_of",
    "word_count",
]

_WORD = re.compile(r"[^\W\d_]+")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_OPENING = "'\"“‘([ "
_CLOSING = "'\"”’)]"

STOP_WORDS = frozenset(
    """a about above after again against all also although among an and any are as at
    be because been before being below between both but by can could did do does doing
    down during each either few for from further had has have having he her here hers
    him his how however i if in into is it its itself just may might more most much must
    no nor not now of off on once only or other our ours out over own per same she
    should so some such than that the their theirs them then there these they this those
    through thus to too under until up upon very was we were what when where whether
    which while who whom why will with within without would yet you your""".split()
)


def word_count(text: str) -> int:
    """Return the number of words, counted as an abstract's asked length is."""
    return len(text.split())


def content_words(text: str) -> list[str]:
    """Return the lower-cased words of ``text`` that carry content (no stop words)."""
    return [
        w
        for w in map(str.lower, _WORD.findall(text))
        if len(w) > 2 and w not in STOP_WORDS
    ]


def _starts_sentence(paragraph: str, start: int) -> bool:
    """Tell whether the word at ``start`` is the first of its sentence."""
    core = paragraph[max(0, start - 40) : start].rstrip().rstrip(_OPENING).rstrip()
    if not core and start > 40:
        core = paragraph[:start].rstrip().rstrip(_OPENING).rstrip()
    if not core:
        return True
    if core[-1] in "-/'’":
        return False  # a hyphenated part ("Disease-Causing") is where its word is
    return core.rstrip(_CLOSING)[-1:] in (".", "!", "?", ":")


def _words(text: str) -> Iterator[tuple[re.Match[str], bool]]:
    """Yield each word of ``text`` and whether it starts a sentence."""
    for paragraph in _PARAGRAPH_BREAK.split(text):
        for match in _WORD.finditer(paragraph):
            yield match, _starts_sentence(paragraph, match.start())


def _is_title(word: str) -> bool:
    return word[0].isupper() and (len(word) == 1 or word[1:].islower())


@dataclass
class CaseIndex:
    """How an article writes each word: in lower case, capitalised mid-sentence."""

    lower: set[str] = field(default_factory=set)
    capitalised: set[str] = field(default_factory=set)
    """Words (lower-cased) the article writes with a capital mid-sentence."""

    @classmethod
    def of(cls, article: str) -> CaseIndex:
        """Index the spellings of an article's words."""
        # Most words of an article are in lower case, and those need no look at
        # where their sentence starts: only the others are placed.
        index = cls()
        lower, capitalised = index.lower, index.capitalised
        for paragraph in _PARAGRAPH_BREAK.split(article):
            for match in _WORD.finditer(paragraph):
                word = match.group(0)
                if word.islower():
                    lower.add(word)
                elif not _starts_sentence(paragraph, match.start()):
                    capitalised.add(word.lower())
        return index

    def only_lower(self, word: str) -> bool:
        """Tell whether the article writes ``word`` only in lower case."""
        key = word.lower()
        return key in self.lower and key not in self.capitalised


def case_changes(text: str, index: CaseIndex) -> list[str]:
    """Return the words capitalised mid-sentence that the article writes in lower case."""
    return [
        match.group(0)
        for match, initial in _words(text)
        if not initial
        and _is_title(match.group(0))
        and index.only_lower(match.group(0))
    ]


def repair_case(text: str, index: CaseIndex) -> tuple[str, list[str]]:
    """Lower-case the words :func:`case_changes` finds; return the text and the words.

    Names, acronyms and any word the article capitalises mid-sentence are never
    touched, nor a word the article does not use at all.
    """
    repaired: list[str] = []
    pieces: list[str] = []
    last = 0
    for match, initial in _words(text):
        word = match.group(0)
        if not initial and _is_title(word) and index.only_lower(word):
            pieces.append(text[last : match.start()] + word.lower())
            last = match.end()
            repaired.append(word)
    pieces.append(text[last:])
    return "".join(pieces), repaired


def _script(char: str) -> str:
    try:
        return unicodedata.name(char).split()[0]
    except ValueError:
        return "UNKNOWN"


def scripts_of(text: str) -> set[str]:
    """Return the scripts (LATIN, GREEK, CYRILLIC...) of the letters of ``text``."""
    return {_script(c) for c in set(text) if c.isalpha()}


def foreign_script_words(text: str, article: str | set[str]) -> list[str]:
    """Return the words of ``text`` with a letter of a script the article never uses."""
    known = scripts_of(article) if isinstance(article, str) else article
    return [
        m.group(0)
        for m in _WORD.finditer(text)
        if any(_script(c) not in known for c in m.group(0))
    ]


def repeated_trigram_share(text: str) -> float:
    """Return the share of the text's word trigrams that repeat an earlier one.

    NaN for a text of fewer than three words.
    """
    words = [m.group(0).lower() for m in re.finditer(r"\w+", text)]
    grams = [tuple(words[i : i + 3]) for i in range(len(words) - 2)]
    if not grams:
        return float("nan")
    counts = Counter(grams)
    return sum(n - 1 for n in counts.values()) / len(grams)
