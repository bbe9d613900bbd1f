"""The sentences of a section around a span: the context a quote is shown with."""

from __future__ import annotations

import re
from dataclasses import dataclass

from veriscribe.checks.quote_forms import BLANK_LINES, BULLET_GLYPHS, INLINE_BULLET

__all__ = ["has_sentence_end", "sentence_span"]


_CONTEXT_WINDOW = 4000
_SENTENCE_END = re.compile(
    r"[.!?][\"'”’)\]]*"
    r"(?:\[[\d,;\s–-]{1,20}\]|\([\d,;\s–-]{1,20}\)|[⁰¹²³⁴⁵⁶⁷⁸⁹⁻,]{1,12})?"
    r"(?P<space>\s+)"
)
_ABBREVIATIONS = frozenset(
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
                if token in _ABBREVIATIONS or len(token) == 1:
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
