"""Words of an abstract against its article: case, script, content words, repetition.

A small model that is kept from copying its source rewords in ways a reader notices
at once: a word capitalised mid-sentence that the article writes in lower case ("may
be Highly Relevant"), a letter of another script in place of a Latin one, the same
phrase again and again, a word bent out of shape where the article's word was kept
from it ("worker productive" for the article's "worker productivity", "mosques" for
"mosquitoes", "Tokyo encephalitis" for "Japanese encephalitis"). These helpers find
them; :func:`repair_case` mends the first and :func:`repair_words` the last.

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

from rapidfuzz import fuzz

from veriscribe.text.tokens import CONTENT_STOP_WORDS, letter_word_matches, word_runs

__all__ = [
    "CaseIndex",
    "WordContexts",
    "bent_words",
    "case_changes",
    "foreign_script_words",
    "read_words",
    "repair_case",
    "repair_words",
    "repeated_trigram_share",
    "scripts_of",
    "word_count",
]

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_OPENING = "'\"“‘([ "
_CLOSING = "'\"”’)]"


def word_count(text: str) -> int:
    """Return the number of words, counted as an abstract's asked length is."""
    return len(text.split())


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
        for match in letter_word_matches(paragraph):
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
        lower = index.lower
        for paragraph in _PARAGRAPH_BREAK.split(article):
            for match in letter_word_matches(paragraph):
                word = match.group(0)
                if word.islower():
                    lower.add(word)
                else:
                    index._place(paragraph, match, word.lower())
        return index

    def _place(self, paragraph: str, match: re.Match[str], key: str) -> None:
        """Note a word that is not in lower case if it is mid-sentence."""
        # A name is placed once: its other capitals add nothing.
        if key not in self.capitalised and not _starts_sentence(
            paragraph, match.start()
        ):
            self.capitalised.add(key)

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
        for m in letter_word_matches(text)
        if any(_script(c) not in known for c in m.group(0))
    ]


def repeated_trigram_share(text: str) -> float:
    """Return the share of the text's word trigrams that repeat an earlier one.

    NaN for a text of fewer than three words.
    """
    words = word_runs(text)
    grams = [tuple(words[i : i + 3]) for i in range(len(words) - 2)]
    if not grams:
        return float("nan")
    counts = Counter(grams)
    return sum(n - 1 for n in counts.values()) / len(grams)


BENT_PREFIX = 4
"""A bent word shares at least this many first letters with the article's word ..."""
BENT_SIMILARITY = 70.0
"""... and is this similar to it (rapidfuzz ratio, 0-100) when the article has it
between the same two words, ..."""
CLOSE_SIMILARITY = 90.0
"""... or this similar when it has it beside one of them."""
_INFLECTION = re.compile(r"(?:ing|ed|es|(?<!s)s|d|ly)$")


ECHO_JOINTS = frozenset({"or", "nor", "versus", "vs"})
"""Words that only ever join two different words: "positive or negative". Not "and"
or "to": "more and more", "from patient to patient" repeat on purpose."""


def _inflected(word: str) -> str:
    """Return a word without its inflection: "suggests", "suggested" -> "suggest"."""
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("ically"):
        return word[:-4]  # "dynamically" -> "dynamic"
    return _INFLECTION.sub("", word).rstrip("e")


def _inflections(word: str, other: str) -> bool:
    """Tell whether two words are forms of one: "findings" and "finding", "found".

    An adverb and its adjective count as one word too: "independently associated"
    and "commercially available" are right where "independent" would be wrong, and
    only a parser could tell those from "an independently factor".
    """
    ours, theirs = _inflected(word), _inflected(other)
    return ours == theirs or _inflected(ours) == theirs or ours == _inflected(theirs)


@dataclass
class WordContexts:
    """The article's words (lower-cased) with the words beside them.

    Words are read across punctuation but not across paragraphs. The neighbours of
    a word are counted when asked for: the checks ask about the few words of an
    abstract that the article does not use, not about the article's thousands.
    """

    words: set[str] = field(default_factory=set)
    spelling: dict[str, str] = field(default_factory=dict)
    """How the article writes each word where it is not a sentence's first."""
    tokens: list[str] = field(default_factory=lambda: [""])
    """The article's words, lower-cased, in order; "" before and after each
    paragraph."""
    positions: dict[str, list[int]] = field(default_factory=dict)
    """For a word, where it is in :attr:`tokens`."""

    @classmethod
    def of(cls, article: str) -> WordContexts:
        """Index an article's words and where they are."""
        return read_words(article)[1]

    def _locate(self) -> None:
        """Find where each of :attr:`tokens` is."""
        positions = self.positions
        for at, token in enumerate(self.tokens):
            if token:
                found = positions.get(token)
                if found is None:
                    positions[token] = [at]
                else:
                    found.append(at)
        self.words.update(positions)

    def after(self, word: str) -> Counter[str]:
        """Return the words that follow ``word`` and how often."""
        tokens = self.tokens
        return Counter(
            tokens[at + 1] for at in self.positions.get(word, ()) if tokens[at + 1]
        )

    def before(self, word: str) -> Counter[str]:
        """Return the words that precede ``word`` and how often."""
        tokens = self.tokens
        return Counter(
            tokens[at - 1] for at in self.positions.get(word, ()) if tokens[at - 1]
        )

    def between(self, left: str, right: str) -> Counter[str]:
        """Return the words found between ``left`` and ``right`` and how often."""
        tokens = self.tokens
        return Counter(
            tokens[at + 1]
            for at in self.positions.get(left, ())
            if tokens[at + 1] and tokens[at + 2] == right
        )

    def mend(self, word: str, left: str | None, right: str | None) -> str | None:
        """Return the article's word that ``word`` is a bent form of, if any.

        Only a word the article never uses is mended, and only to a word the
        article writes next to the same neighbour, not another form of it (see
        `_inflections`): one that starts with the same
        :data:`BENT_PREFIX` letters and is :data:`BENT_SIMILARITY` alike ("productive"
        after "worker" where the article writes "worker productivity"), or, for a
        name (capitalised mid-sentence), the article's name between the same two
        words ("and Tokyo encephalitis" where it writes "and Japanese encephalitis").
        """
        key = word.lower()
        if len(key) < BENT_PREFIX or key in self.words or key in CONTENT_STOP_WORDS:
            return None
        around = (
            self.between(left, right)
            if left is not None and right is not None
            else Counter()
        )
        beside: Counter[str] = Counter()
        if left is not None:
            beside.update(self.after(left))
        if right is not None:
            beside.update(self.before(right))
        bent = [
            (other in around, fuzz.ratio(key, other), count, other)
            for other, count in beside.items()
            if other[:BENT_PREFIX] == key[:BENT_PREFIX]
            and not _inflections(key, other)
            and fuzz.ratio(key, other)
            >= (BENT_SIMILARITY if other in around else CLOSE_SIMILARITY)
        ]
        if bent:
            return self.spelling[max(bent)[3]]
        if _is_title(word) and left is not None and right is not None:
            names = [
                (count, other)
                for other, count in around.items()
                if _is_title(self.spelling[other])
            ]
            if names:
                return self.spelling[max(names)[1]]
        return None

    def unecho(
        self, word: str, first: str, joint: str, right: str | None
    ) -> str | None:
        """Return the article's word where ``word`` echoes ``first`` across ``joint``.

        "a positive (or positive) test" where the article writes "a positive (or
        negative) test": the second word repeats the first across a joining word, the
        article never writes that repetition, and it writes another word in its place
        (before the same next word, when there is one). The word the article writes
        there most often is returned, before the same next word if the article has it
        there; a repetition the article itself makes, or one with nothing in its place
        in the article, is left alone.
        """
        key = word.lower()
        if key != first or joint not in ECHO_JOINTS:
            return None
        tokens = self.tokens
        placed: Counter[str] = Counter()
        anywhere: Counter[str] = Counter()
        for at in self.positions.get(key, ()):
            if tokens[at + 1] != joint:
                continue
            other = tokens[at + 2]
            if other == key:
                return None  # the article repeats it too
            if other:
                anywhere[other] += 1
                if right is not None and tokens[at + 3] == right:
                    placed[other] += 1
        instead = placed or anywhere
        if not instead:
            return None
        return self.spelling[instead.most_common(1)[0][0]]


def read_words(article: str) -> tuple[CaseIndex, WordContexts]:
    """Index an article's spellings and words in one reading of it.

    The same as ``(CaseIndex.of(article), WordContexts.of(article))``.
    """
    case, contexts = CaseIndex(), WordContexts()
    lower = case.lower
    tokens, spelling = contexts.tokens, contexts.spelling
    for paragraph in _PARAGRAPH_BREAK.split(article):
        for match in letter_word_matches(paragraph):
            word = match.group(0)
            key = word.lower()
            if word.islower():
                lower.add(word)
            else:
                case._place(paragraph, match, key)
            if key not in spelling:  # the first spelling of each word is kept
                spelling[key] = word
            tokens.append(key)
        tokens.append("")
    contexts._locate()
    return case, contexts


def _bent(text: str, index: WordContexts) -> Iterator[tuple[re.Match[str], str]]:
    """Yield each bent word of a one-paragraph text and the article's word for it."""
    matches = list(letter_word_matches(text))
    for i, match in enumerate(matches):
        left = matches[i - 1].group(0).lower() if i else None
        right = matches[i + 1].group(0).lower() if i + 1 < len(matches) else None
        mended = index.mend(match.group(0), left, right)
        if mended is None and i >= 2 and left is not None:
            first = matches[i - 2].group(0).lower()
            mended = index.unecho(match.group(0), first, left, right)
        if mended is None:
            continue
        if _starts_sentence(text, match.start()):
            mended = mended[:1].upper() + mended[1:]
        yield match, mended


def bent_words(text: str, index: WordContexts) -> list[str]:
    """Return the words :func:`repair_words` would mend, as ``bent -> article's``."""
    return [f"{match.group(0)} -> {mended}" for match, mended in _bent(text, index)]


def repair_words(text: str, index: WordContexts) -> tuple[str, list[str]]:
    """Put back the article's word where the text bent it; return text and changes.

    See :meth:`WordContexts.mend` for which words are mended. The changes read
    ``bent -> article's``.
    """
    pieces: list[str] = []
    changes: list[str] = []
    last = 0
    for match, mended in _bent(text, index):
        pieces.append(text[last : match.start()] + mended)
        last = match.end()
        changes.append(f"{match.group(0)} -> {mended}")
    pieces.append(text[last:])
    return "".join(pieces), changes
