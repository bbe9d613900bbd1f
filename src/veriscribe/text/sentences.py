"""The package's sentence splitters, each for its own job.

The splitters differ on purpose; pick the one whose job matches:

- :func:`first_sentence`: the first sentence of a paragraph as pySBD reads it (short
  mis-split pieces merged), with shortcuts that give pySBD's answer faster. The facet
  labels read it.
- :func:`split_sentences`: a paragraph's sentences by repeated :func:`first_sentence`,
  a paragraph that does not split cut into 150-word pieces: text to pack into chunks.
- :func:`sentences_of`: the sentences of an abstract, never cutting one (a piece that
  cannot start a sentence joins the one before), a paragraph ending one: what the word
  and abstract checks read.
- :func:`lead_sentence`: a quick regex cut of a text's first sentence, for a summary
  that stands in for a section.
- :func:`complete_sentences`: a reply cut at the token limit without its unfinished
  last sentence.
- :func:`index_units`: a quick regex split of a section into units to index, a hundred
  times faster than pySBD.
- :func:`claim_sentences`: the sentences of prose as pySBD reads them, with their
  offsets, pieces under :data:`MIN_CLAIM_SENTENCE_CHARS` dropped: an answer's claim
  units, and the sentences the support measures compare.
- :func:`quotable_units`: a section's sentences and list items as spans of its text,
  hard-wrapped lines read as one: what an answer may quote.
- :func:`sentence_span`: the whole sentences of a section around a span, a list item
  with the line that leads into its list: the context a quote is checked and shown
  with; :func:`has_sentence_end` tells whether a sentence ends in a stretch of text.

:func:`first_sentence` reads with one segmenter, made once and faster than pySBD's;
:func:`claim_sentences` and :func:`quotable_units` make one of the same kind for every
block they split. Their answers are pySBD's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Final

import pysbd
from pysbd.lang.english import English
from pysbd.utils import TextSpan

__all__ = [
    "MAX_UNIT_CHARS",
    "MIN_CLAIM_SENTENCE_CHARS",
    "MIN_UNIT_CHARS",
    "Sentence",
    "BLANK_LINES",
    "BULLET_GLYPHS",
    "INLINE_BULLET",
    "Unit",
    "claim_sentences",
    "complete_sentences",
    "first_sentence",
    "has_sentence_end",
    "index_units",
    "lead_sentence",
    "quotable_units",
    "quote_text",
    "sentence_span",
    "sentences_of",
    "split_sentences",
]

# ------------------------------------------------------------------ first sentence

# pysbd splits after some abbreviations ("Patients aged 65 yr." + "or older ...").
# A first "sentence" shorter than this, or one followed by a piece that starts in
# lower case, is such a mis-split and is merged with what follows.
_MIN_SENTENCE_CHARS: Final = 20
# Only the head of a paragraph is segmented: the first sentence lies there, and pysbd
# slows down on very long inputs.
_HEAD_CHARS: Final = 2000


# pysbd takes milliseconds per paragraph, and a batch labels every paragraph of every
# article. Two shortcuts give pysbd's answer without most of that work. A paragraph whose
# first terminator outside parentheses plainly ends a sentence (after a word, a citation
# or a parenthesis; before a capital or the end) needs no segmenter. A period between
# digits is a decimal point, which pysbd never ends a sentence at. That is 86% of the
# development texts (8,799 paragraphs, author abstracts and BIORC800 abstracts and
# sentences), and the answer equals pysbd's on all of them. Otherwise pysbd reads a
# window of the head first, and the whole head only when the first sentence does not
# end well inside the window (or the window cuts a quote or a parenthesis).
_FIRST_END: Final = re.compile(r"[!?]|\.(?!(?<=\d\.)\d)")
_PLAIN_END: Final = re.compile(
    r"(?:^|\s)(?:([a-z][a-z-]{2,})|(?=[A-Za-z0-9-]*[A-Z])([A-Za-z][A-Za-z0-9-]*[A-Za-z0-9])"
    r"|[a-z]{3,}\s?\[[\d,\u2013\- ]+\]|\([^()]*\))$"
)
_ASIDE: Final = re.compile(r"\([^()\[\]]*\)|\[[^()\[\]]*\]")
_ENUMERATOR: Final = re.compile(r"\((?:\d{1,3}|[ivxIVX]{1,4}|[a-zA-Z])\)")
_LIST_MARK: Final = re.compile(r"(?:^|[\s(])(?:\d{1,3}|[ivx]{1,4}|[a-z])\)")
_OPEN_MARK: Final = re.compile(r"[()\[\]\"\u201c\u2018\u00ab]")
_CAPITAL_NEXT: Final = re.compile(r"\s+[A-Z]")
_CLOSES_ALL: Final = re.compile(r"[)\]]*\s*$")
_WINDOWS: Final = (400, 1200)
_WINDOW_MARGIN: Final = 120


@cache
def _abbreviation_patterns(
    abbreviations: tuple[str, ...],
) -> tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...]:
    """Return pysbd's two patterns of each abbreviation, compiled once, in its order."""
    return tuple(
        (
            stripped,
            re.compile(rf"(?:^|\s|\r|\n){stripped}", re.IGNORECASE),
            re.compile(r"(?<={" + str(re.escape(stripped)) + "} ).{1}"),
        )
        for stripped in (a.strip() for a in abbreviations)
    )


# The letters other than ASCII ones that ``re.IGNORECASE`` matches to an ASCII letter
# (dotted and dotless i, long s, Kelvin sign).
_CASE_FOLDS: Final = re.compile("[\u0130\u0131\u017f\u212a]")
_LETTERS: Final = re.compile("[a-z]+$")
_DOTTED_WORD: Final = re.compile(r"(?<!\S)([a-z]+)\.")


class _AbbreviationReplacer(English.AbbreviationReplacer):  # type: ignore[misc]
    """pysbd's abbreviation replacer, without the work that cannot change its result.

    For each abbreviation in the text, pysbd looks for it after every space and then
    rewrites the whole text once per occurrence ("al" occurs at the start of every
    "also", "all", "although"). The rewrite of an occurrence turns the periods that
    follow it into a placeholder; done again for the same occurrence text it finds no
    period left to turn, so only the first of equal occurrences is done here. Every
    rewrite turns a period right after a space and the occurrence, so an abbreviation
    of letters that the text never shows as a word ending on a period ("al" without
    " al.") is not looked for (unless the text holds one of the few other letters
    that match an ASCII letter regardless of case, as the long s does "s"); the words
    are found in one pass. pysbd's next-word pattern is wrapped
    in literal braces: it finds nothing in a text without a "{", and is not run there.
    The patterns are compiled once.
    """

    def search_for_abbreviations_in_string(self, text: str) -> str:
        """Protect the periods of abbreviations in one line, as pysbd does."""
        lowered = text.lower()
        patterns = _abbreviation_patterns(tuple(self.lang.Abbreviation.ABBREVIATIONS))
        # The words of letters that open after a space and end on a period.
        dotted = (
            None
            if _CASE_FOLDS.search(text)
            else frozenset(_DOTTED_WORD.findall(lowered))
        )
        for stripped, starts, next_word in patterns:
            if stripped not in lowered:
                continue
            if (
                dotted is not None
                and stripped not in dotted
                and _LETTERS.match(stripped)
            ):
                continue
            found: list[str] = starts.findall(text)
            if not found:
                continue
            char_array: list[str] = next_word.findall(text) if "{" in text else []
            done: set[str] = set()
            for index, match in enumerate(found):
                if index >= len(char_array):
                    # No next character: the rewrite depends on the occurrence only.
                    if match in done:
                        continue
                    done.add(match)
                text = self.scan_for_replacements(text, match, index, char_array)
        return text


class _English(English):  # type: ignore[misc]
    """pysbd's English, with the faster abbreviation replacer."""

    AbbreviationReplacer = _AbbreviationReplacer


class _Segmenter(pysbd.Segmenter):  # type: ignore[misc]  # pysbd is untyped
    r"""pysbd's segmenter, locating its sentences in the text by plain search.

    pysbd finds each sentence's span with a regex built from the sentence (its text
    escaped, then ``\s*``), compiled anew for every sentence: most of the time of a
    short paragraph. A plain search gives the same spans.
    """

    def __init__(self) -> None:
        super().__init__(language="en", clean=False, char_span=True)
        self.language_module = _English

    def sentences_with_char_spans(self, sentences: list[str]) -> list[TextSpan]:
        """Return each sentence's span: its first occurrence after the previous one."""
        text: str = self.original_text
        if not all(sentences):
            # An empty sentence matches whitespace only: pysbd's own rule decides.
            spans: list[TextSpan] = super().sentences_with_char_spans(sentences)
            return spans
        spans = []
        prior_end = 0
        for sentence in sentences:
            # The regex's matches, in order and not overlapping: each search starts
            # where the last match (trailing whitespace included) ended.
            start = text.find(sentence)
            while start != -1:
                end = start + len(sentence)
                while end < len(text) and text[end].isspace():
                    end += 1
                if end > prior_end:
                    spans.append(TextSpan(text[start:end], start, end))
                    prior_end = end
                    break
                start = text.find(sentence, end)
        return spans


# pysbd passes its patterns to ``re`` as strings, one or more per abbreviation in the
# text: about a thousand on the development articles, beyond the 512 that ``re`` keeps
# compiled, so it compiled most of them again on every paragraph.
_RE_CACHE: Final = 4096


@cache
def _segmenter() -> pysbd.Segmenter:
    if getattr(re, "_MAXCACHE", _RE_CACHE) < _RE_CACHE:
        setattr(re, "_MAXCACHE", _RE_CACHE)  # noqa: B010  (a private constant)
    return _Segmenter()


@cache
def _abbreviations() -> frozenset[str]:
    from pysbd.lang.english import English

    return frozenset(a.lower() for a in English.Abbreviation.ABBREVIATIONS)


def _plain_first_sentence(head: str) -> str | None:
    """Return the first sentence when it plainly ends at the first terminator."""
    # pysbd never ends a sentence inside a parenthesis or brackets ("et al." in a
    # citation): look at the first terminator outside them.
    asides = [m.span() for m in _ASIDE.finditer(head)]
    end = next(
        (
            m
            for m in _FIRST_END.finditer(head)
            if not any(start < m.start() < stop for start, stop in asides)
        ),
        None,
    )
    if end is None or end.end() < _MIN_SENTENCE_CHARS:
        return None
    before = _PLAIN_END.search(head, 0, end.start())
    word = before.group(1) or before.group(2) if before else None
    if before is None or (word is not None and word.lower() in _abbreviations()):
        return None
    bare = _ASIDE.sub(" ", head[: end.start()])
    if (
        _OPEN_MARK.search(bare)  # an open quote or bracket: pysbd reads further
        or _ENUMERATOR.search(head, 0, end.end())
        or _LIST_MARK.search(bare + head[end.start() : end.end()])
    ):
        return None
    if _CAPITAL_NEXT.match(head, end.end()):
        return head[: end.end()].strip()
    if _CLOSES_ALL.match(head, end.end()):
        return head.strip()  # the paragraph is one sentence
    return None


def _balanced(text: str) -> bool:
    return (
        text.count("(") == text.count(")")
        and text.count("[") == text.count("]")
        and text.count("\u201c") == text.count("\u201d")
        and text.count('"') % 2 == 0
    )


def _segmented_first_sentence(head: str) -> tuple[str, int]:
    """Return pysbd's first sentence of ``head`` (short pieces merged) and its end."""
    spans = _segmenter().segment(head)
    if not spans:
        return head, len(head)
    index = 0
    while index + 1 < len(spans) and (
        len(head[: spans[index].end].strip()) < _MIN_SENTENCE_CHARS
        or head[spans[index + 1].start :].lstrip()[:1].islower()
    ):
        index += 1
    return head[: spans[index].end].strip(), spans[index].end


def first_sentence(text: str) -> str:
    """Return the first sentence of a paragraph, merging implausibly short pieces."""
    stripped = text.strip()
    if not stripped:
        return ""
    head = stripped[:_HEAD_CHARS]
    plain = _plain_first_sentence(head)
    if plain is not None:
        return plain
    for size in _WINDOWS:
        if len(head) > size and _balanced(head[:size]):
            sentence, end = _segmented_first_sentence(head[:size])
            if end <= size - _WINDOW_MARGIN:
                return sentence
    return _segmented_first_sentence(head)[0]


def first_sentences(texts: Sequence[str]) -> list[str]:
    """Return the first sentence of each paragraph, in order."""
    return [first_sentence(text) for text in texts]


# ------------------------------------------------------------------- all sentences


def split_sentences(text: str) -> list[str]:
    """Split a paragraph into sentences; a sentence with no end is cut by words."""
    sentences = []
    rest = text
    while rest.strip():
        head = first_sentence(rest)
        if not head or len(head) >= len(rest):
            break
        sentences.append(head)
        rest = rest[rest.find(head) + len(head) :]
    if rest.strip():
        sentences.append(rest.strip())
    if len(sentences) == 1:
        words = text.split()
        return [" ".join(words[i : i + 150]) for i in range(0, len(words), 150)]
    return sentences


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


# ------------------------------------------------------------------ quick regex cuts

_LEAD_END: Final = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")
_REPLY_END: Final = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?=\s|$)")
_UNIT_END: Final = re.compile(r"(?<=[.!?])\s+(?=[^a-z\s])|\n\s*")


def lead_sentence(text: str) -> str:
    """Return the text up to its first sentence end (a quick regex cut).

    A sentence ends at ``.``, ``!`` or ``?`` and whitespace before a capital, a digit,
    a parenthesis or a quote. Meant for one-line text (whitespace collapsed); used where
    a section's opening sentence stands in for its summary.
    """
    return _LEAD_END.split(text, maxsplit=1)[0]


def complete_sentences(text: str) -> str:
    """Drop an unfinished last sentence (a reply cut at the token limit).

    A text that does not end a sentence keeps what comes up to its last sentence end;
    one with no sentence end at all is kept as it is.
    """
    text = text.strip()
    if not text or _REPLY_END.search(text[-3:]) is not None:
        return text
    ends = list(_REPLY_END.finditer(text))
    return text[: ends[-1].end()] if ends else text


def index_units(text: str) -> list[str]:
    """Split a section into units to index: untrimmed pieces, empty ones kept.

    A unit ends at a sentence end before anything but a lower-case word, or at a line
    break (list items, table rows). Cruder than the quotable units an answer reads,
    and a hundred times faster, which matters for an index built on the first
    question.
    """
    return _UNIT_END.split(text)


# ----------------------------------------------------------------- claim sentences

# A blank line (spaces and tabs allowed) and the whitespace after it: a paragraph break.
_BLOCK_BREAK = re.compile(r"\n[ \t]*\n\s*")


def _pysbd_spans(text: str) -> list[TextSpan]:
    """Return pySBD's sentence spans of ``text``, read by a segmenter of its own.

    The segmenter is the faster one :func:`first_sentence` reads with; its spans are
    pySBD's own.
    """
    _segmenter()  # re's cache widened, once
    # A fresh segmenter per call: pySBD keeps the text being split on the object.
    spans: list[TextSpan] = _Segmenter().segment(text)
    return spans


MIN_CLAIM_SENTENCE_CHARS = 15
"""Pieces shorter than this (after trimming whitespace) are fragments, not claims."""


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of a text, trimmed of surrounding whitespace.

    Attributes:
        text: The sentence text.
        start: Offset of its first character in the text.
        end: Offset just past its last character.
    """

    text: str
    start: int
    end: int


def claim_sentences(text: str) -> list[Sentence]:
    """Split prose into trimmed sentences with pySBD, dropping short fragments."""
    sentences: list[Sentence] = []
    cursor = 0
    for block in _BLOCK_BREAK.split(text):
        base = text.find(block, cursor) if block else cursor
        cursor = base + len(block)
        if not block.strip():
            continue
        for span in _pysbd_spans(block):
            piece = block[span.start : span.end]
            lead = len(piece) - len(piece.lstrip())
            trimmed = piece.strip()
            if len(trimmed) < MIN_CLAIM_SENTENCE_CHARS:
                continue
            start = base + span.start + lead
            sentences.append(Sentence(trimmed, start, start + len(trimmed)))
    return sentences


# ------------------------------------------------------------------ quotable units

# Quotable units of a section: its sentences and list items, as spans of its text.
# Constrained answers may quote only these units (or name them by id), so every quote
# is a span of the cited section by construction. Guideline text is often hard-wrapped
# (PDF extractions) and full of lists, so a unit ends at a sentence end, at a blank line
# and before a list bullet, but not at a bare line break inside a sentence.

MIN_UNIT_CHARS = 20
"""Units shorter than this (headings, page numbers, stray labels) are not quotable."""

MAX_UNIT_CHARS = 600
"""Longer units (run-on table text) are cut at clause ends to keep quotes readable."""

_BULLET_LINE = re.compile(r"\n(?=[ \t]*(?:[-*+•·▪◦‣●○■□►➢]|\d{1,3}[.)])[ \t]+)")
_CLAUSE_END = re.compile(r"[;:](?=\s)")
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Unit:
    """A quotable unit: its offsets in the section text and its text on one line."""

    start: int
    end: int
    text: str


def quote_text(section_text: str, start: int, end: int) -> str:
    """Return a span of a section as a one-line quote (whitespace runs collapsed)."""
    return _WHITESPACE.sub(" ", section_text[start:end]).strip()


@lru_cache(maxsize=256)
def quotable_units(section_text: str) -> tuple[Unit, ...]:
    """Split a section into quotable units, in order, without overlaps."""
    spans: list[tuple[int, int]] = []
    for block_start, block_end in _pieces(
        section_text, 0, len(section_text), _BLOCK_BREAK
    ):
        for item_start, item_end in _pieces(
            section_text, block_start, block_end, _BULLET_LINE
        ):
            spans.extend(_unit_sentences(section_text, item_start, item_end))
    units = []
    for start, end in spans:
        for piece_start, piece_end in _bounded(section_text, start, end):
            text = quote_text(section_text, piece_start, piece_end)
            if len(text) >= MIN_UNIT_CHARS and any(c.isalpha() for c in text):
                units.append(Unit(piece_start, piece_end, text))
    return tuple(units)


def _pieces(
    text: str, start: int, end: int, separator: re.Pattern[str]
) -> list[tuple[int, int]]:
    """Split ``text[start:end]`` at a separator into trimmed, non-empty spans."""
    out = []
    cursor = start
    for match in separator.finditer(text, start, end):
        out.append((cursor, match.start()))
        cursor = match.end()
    out.append((cursor, end))
    return [span for span in map(lambda s: _trim(text, *s), out) if span[1] > span[0]]


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _unit_sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split one block into sentences with pySBD; line breaks read as spaces."""
    # Same length as the original, so offsets carry over unchanged.
    flat = text[start:end].replace("\n", " ")
    spans = [_trim(text, start + s.start, start + s.end) for s in _pysbd_spans(flat)]
    return [span for span in spans if span[1] > span[0]] or [(start, end)]


def _bounded(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Cut a unit longer than MAX_UNIT_CHARS at clause ends (or leave it whole)."""
    if end - start <= MAX_UNIT_CHARS:
        return [(start, end)]
    out = []
    cursor = start
    for match in _CLAUSE_END.finditer(text, start, end):
        if match.end() - cursor >= MAX_UNIT_CHARS // 2:
            out.append(_trim(text, cursor, match.end()))
            cursor = match.end()
    out.append(_trim(text, cursor, end))
    return [span for span in out if span[1] > span[0]]


# ------------------------------------------------------------ sentences around a span

# Private-use glyphs that PDF extraction leaves for Wingdings and Symbol bullets.
_PDF_BULLETS = "\uf0a1\uf0a7\uf0b7\uf0d8"
# Bullets at a line start; between spaces only those that are never text.
BULLET_GLYPHS = "-*+•·▪◦‣●○■□►➢♦❖" + _PDF_BULLETS
_INLINE_GLYPHS = "•▪◦‣►➢♦❖" + _PDF_BULLETS
INLINE_BULLET = re.compile(rf"(?<=\s)[{re.escape(_INLINE_GLYPHS)}](?=\s)")
BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)*")

_CONTEXT_WINDOW = 4000
_SENTENCE_END = re.compile(
    r"[.!?][\"'”’)\]]*"
    r"(?:\[[\d,;\s–-]{1,20}\]|\([\d,;\s–-]{1,20}\)|[⁰¹²³⁴⁵⁶⁷⁸⁹⁻,]{1,12})?"
    r"(?P<space>\s+)"
)
_SPAN_ABBREVIATIONS = frozenset(
    "eg ie etc vs cf al fig figs no nos approx dr mr mrs ms st vol ref ca incl resp "
    "min max ed eds pp p us uk".split()
)
_ABBREVIATION_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_CONTEXT_ITEM = re.compile(
    rf"(?m)^[ \t]*(?:[{re.escape(BULLET_GLYPHS)}](?=[ \t]|$)"
    rf"|(?:\d{{1,3}}|[A-Za-z]|[ivxIVX]{{2,4}})[.)][ \t]|\((?:\d{{1,3}}|[A-Za-z])\)[ \t])"
)
_CONTEXT_HTML = re.compile(
    r"(?i)<(?P<close>/)?(?P<name>li|p|div|td|th|tr|table|ul|ol|br|h[1-6])\b[^<>]{0,400}>"
)


def sentence_span(section_text: str, span: tuple[int, int]) -> tuple[int, int]:
    """Expand a span of a section to the whole sentence or sentences around it.

    A sentence ends at ``.``, ``?`` or ``!`` followed by whitespace (not after an
    abbreviation such as "e.g." or an initial, and not when the next word starts
    in lower case), at a blank line, and where a list item starts. When the span
    starts in a list item, the span also takes in the line that introduces the list
    when that line ends with a colon ("Avoid the following:"), with any items in
    between: the lead-in often carries the polarity of every item. The search looks
    at most a few thousand characters either way.

    Args:
        section_text: The original text of the section.
        span: ``(start, end)`` offsets in ``section_text``.

    Returns:
        ``(start, end)`` offsets with ``start <= span[0]`` and ``end >= span[1]``.
    """
    start, end = span
    n = len(section_text)
    start = max(0, min(start, n))
    end = max(start, min(end, n))
    lo = max(0, start - _CONTEXT_WINDOW)
    hi = min(n, end + _CONTEXT_WINDOW)
    cuts = _sentence_cuts(section_text, lo, hi)

    first = 0
    for k, cut in enumerate(cuts):
        if cut.next_start <= start:
            first = k
        else:
            break
    context_start = cuts[first].next_start
    context_end = hi
    for cut in cuts:
        if cut.prev_end >= end:
            context_end = cut.prev_end
            break
    context_start = _lead_in_start(section_text, cuts, first, context_start)
    context_start = min(context_start, start)
    context_end = max(context_end, end)
    while context_start < start and section_text[context_start].isspace():
        context_start += 1
    while context_end > end and section_text[context_end - 1].isspace():
        context_end -= 1
    return context_start, context_end


@dataclass(frozen=True, slots=True)
class _Cut:
    prev_end: int
    next_start: int
    item: bool


def has_sentence_end(text: str, start: int, end: int) -> bool:
    """Tell whether a sentence ends within ``text[start:end]``."""
    return bool(_sentence_ends(text, start, end))


def _sentence_ends(text: str, start: int, end: int) -> list[_Cut]:
    """Return the sentence ends in ``text[start:end]``."""
    cuts: list[_Cut] = []
    for match in _SENTENCE_END.finditer(text, start, end):
        after = match.end()
        if after < len(text) and text[after].islower():
            continue
        if text[match.start()] == "." and after < len(text):
            word = _ABBREVIATION_BEFORE.search(
                text, max(0, match.start() - 12), match.start()
            )
            if word:
                token = word.group(1).replace(".", "").lower()
                if token in _SPAN_ABBREVIATIONS or len(token) == 1:
                    continue
        cuts.append(_Cut(match.start("space"), after, False))
    return cuts


def _sentence_cuts(text: str, lo: int, hi: int) -> list[_Cut]:
    """Return sentence, paragraph and item boundaries in ``text[lo:hi]``, in order.

    The first cut is a sentinel at ``lo``.
    """
    cuts = [_Cut(lo, lo, False), *_sentence_ends(text, lo, hi)]
    for match in BLANK_LINES.finditer(text, lo, hi):
        cuts.append(_Cut(match.start(), match.end(), False))
    for match in _CONTEXT_ITEM.finditer(text, lo, hi):
        line_start = match.start()
        cuts.append(_Cut(line_start, line_start, True))
    for match in INLINE_BULLET.finditer(text, lo, hi):
        cuts.append(_Cut(match.start(), match.start(), True))
    for match in _CONTEXT_HTML.finditer(text, lo, hi):
        is_item = match.group("name").lower() == "li" and not match.group("close")
        cuts.append(_Cut(match.start(), match.end(), is_item))
    cuts.sort(key=lambda cut: (cut.next_start, cut.prev_end))
    return cuts


def _lead_in_start(text: str, cuts: list[_Cut], first: int, start: int) -> int:
    """Extend a context that starts in a list item back to the list's lead-in line."""

    def unit_text(k: int) -> str:
        end = cuts[k + 1].prev_end if k + 1 < len(cuts) else len(text)
        return text[cuts[k].next_start : end].strip()

    def is_item(k: int) -> bool:
        if cuts[k].item:
            return True
        # "•" alone on a line, then a blank line, then the item (PDF extractions).
        j = k - 1
        while j >= 0 and not unit_text(j):
            j -= 1
        return j >= 0 and _is_bare_bullet(unit_text(j))

    if not is_item(first):
        return start
    k = first - 1
    while k >= 0:
        body = unit_text(k)
        if not body or _is_bare_bullet(body) or is_item(k):
            k -= 1
            continue
        return cuts[k].next_start if body.endswith(":") else start
    return start


def _is_bare_bullet(text: str) -> bool:
    return len(text) == 1 and text in BULLET_GLYPHS
