"""Check that a cited quote really occurs in the section it cites.

The tiers follow the verbatim matcher of the cited-QA design (paper appendix A.6):

* ``exact``: the quote is a character-for-character substring of the section.
* ``normalized``: a substring once both texts are normalized (see
  :func:`normalize_with_offsets`).
* ``elided``: the quote contains an ellipsis; the fragments it separates, ignoring
  those under ten characters, number at least two and occur in the section in order
  without overlapping.
* ``elided_risky``: an elided match that cannot be trusted, because the section text
  the ellipsis skips contains a negation or hedge word (``not``, ``unless``, ``may``,
  ...), or because a short fragment the matcher ignored is absent from the text it
  should sit in. Never compliant.
* ``fail``: none of the above; ``unresolved``: the cited section does not exist.

Every match is reported as a span of character offsets in the *original* section
text, so a reader can be shown the exact source passage.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Tier = Literal["exact", "normalized", "elided", "elided_risky", "fail", "unresolved"]

COMPLIANT_TIERS: frozenset[str] = frozenset({"exact", "normalized", "elided"})

MIN_FRAGMENT_CHARS = 10
"""Elided fragments shorter than this (after normalization) are not matched."""

RISKY_WORDS: frozenset[str] = frozenset(
    {
        "not",
        "no",
        "never",
        "without",
        "except",
        "unless",
        "only",
        "neither",
        "nor",
        "none",
        "cannot",
        "can't",
        "don't",
        "doesn't",
        "isn't",
        "aren't",
        "wasn't",
        "shouldn't",
        "won't",
        "may",
        "might",
        "rarely",
        "unlikely",
        "insufficient",
    }
)
"""Words whose omission by an ellipsis can reverse or weaken what a quote says."""

# Occurrences of one fragment considered when searching for an in-order placement;
# a fragment of ten or more characters repeating more often than this is pathological.
_MAX_OCCURRENCES = 500

_SUPERSCRIPT_DIGITS = frozenset("⁰¹²³⁴⁵⁶⁷⁸⁹")
_SUPERSCRIPT_SIGNS = frozenset("⁻⁺")
_SUPERSCRIPT_JOINERS = frozenset(",-–")
_DROPPED_CHARS = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff")

_FOLD: dict[str, str] = {
    **dict.fromkeys("‘’‚‛′‵`´", "'"),
    **dict.fromkeys("“”„‟″‶«»", '"'),
    **dict.fromkeys("‐‑‒–—―−⁃﹘﹣－", "-"),
}

_ELLIPSIS = re.compile(
    r"\[\s*(?:…|\.(?:\s?\.){2,})\s*\]"
    r"|\(\s*(?:…|\.(?:\s?\.){2,})\s*\)"
    r"|…"
    r"|\.(?:\s?\.){2,}"
)
# Separators are required between repetitions so that the pattern cannot backtrack
# exponentially on long runs of dashes.
_TABLE_RULE = re.compile(
    r"(?m)^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$"
)
_SYMBOL_BULLET = re.compile(r"[ \t]*[-*+•·▪◦‣●○■□►➢][ \t]+")
_NUMBER_BULLET = re.compile(r"[ \t]*\d{1,3}[.)][ \t]+")
_REFERENCE = re.compile(
    r"\[\s*\d{1,3}(?:\s*[-,;]\s*\d{1,3})*\s*\]"
    r"|\(\s*\d{1,3}(?:\s*[-,;]\s*\d{1,3})*\s*\)"
)
_WHITESPACE = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r" (?=[.,;:!?)\]}])|(?<=[(\[{]) ")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_WRAPPING_QUOTES = (('"', '"'), ("“", "”"), ("'", "'"), ("‘", "’"), ("«", "»"))


@dataclass(frozen=True, slots=True)
class QuoteCheck:
    """The outcome of checking one quote against the section it cites.

    Attributes:
        tier: The best tier the quote reached.
        span: ``(start, end)`` character offsets of the match in the original section
            text; for normalized and elided matches, from the start of the first
            matched fragment to the end of the last. ``None`` when nothing matched.
        note: A short human-readable explanation of the outcome.
    """

    tier: Tier
    span: tuple[int, int] | None
    note: str

    @property
    def compliant(self) -> bool:
        """Whether the quote counts as verbatim compliant."""
        return is_compliant(self.tier)


@dataclass(frozen=True, slots=True)
class NormalizedText:
    """A normalized text with, for each of its characters, the original span.

    Attributes:
        text: The normalized text.
        starts: For each character of ``text``, the offset in the original text of the
            first character it came from.
        ends: For each character of ``text``, the offset just past the last original
            character it came from.
    """

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """Map the normalized range ``[start, end)`` back to original offsets."""
        if end <= start:
            raise ValueError("empty range has no original span")
        return self.starts[start], self.ends[end - 1]


def is_compliant(tier: Tier | str) -> bool:
    """Tell whether a tier counts as verbatim compliant (exact, normalized, elided)."""
    return tier in COMPLIANT_TIERS


def normalize(text: str) -> str:
    """Normalize a text the way quotes and sections are compared."""
    return normalize_with_offsets(text).text


def normalize_with_offsets(text: str) -> NormalizedText:
    """Normalize a text and keep the map from normalized to original offsets.

    The steps: superscript reference numbers are dropped (superscripts that follow a
    digit are kept as an exponent, ``10⁶`` becoming ``10^6``); Unicode NFKC; lower
    case; curly quotes and dash variants folded to ASCII; soft hyphens and zero-width
    characters removed; table rules, ``|`` pipes and list bullets at line starts
    removed; bracketed or parenthesized reference numbers such as ``[12]``, ``[3-5]``
    or ``(12)`` removed; whitespace runs collapsed to one space; and the space left
    before closing punctuation (or after opening brackets) closed up.
    """
    chars, starts, ends = _fold_characters(text)
    chars, starts, ends = _drop_markup(chars, starts, ends)
    chars, starts, ends = _collapse_spaces(chars, starts, ends)
    return NormalizedText("".join(chars), tuple(starts), tuple(ends))


def check_quote(quote: str, section_text: str | None) -> QuoteCheck:
    """Check a quote against the text of the section it cites."""
    if section_text is None:
        return QuoteCheck("unresolved", None, "the cited section does not exist")
    body = _unwrap(quote)
    if not body:
        return QuoteCheck("fail", None, "the quote is empty")
    norm_quote = normalize(body)
    if not any(ch.isalnum() for ch in norm_quote):
        return QuoteCheck("fail", None, "the quote has no letters or digits")

    at = section_text.find(body)
    if at >= 0:
        return QuoteCheck("exact", (at, at + len(body)), "exact substring")

    section = _normalized_section(section_text)
    at = section.text.find(norm_quote)
    if at >= 0:
        return QuoteCheck(
            "normalized",
            section.original_span(at, at + len(norm_quote)),
            "substring after normalization",
        )

    if _ELLIPSIS.search(body):
        return _check_elided(body, section)
    return QuoteCheck("fail", None, "the quote does not occur in the section")


@lru_cache(maxsize=64)
def _normalized_section(section_text: str) -> NormalizedText:
    # Many quotes are usually checked against the same few sections.
    return normalize_with_offsets(section_text)


def _unwrap(quote: str) -> str:
    """Strip surrounding whitespace and one pair of wrapping quotation marks."""
    body = quote.strip()
    for left, right in _WRAPPING_QUOTES:
        if len(body) >= 2 and body[0] == left and body[-1] == right:
            return body[1:-1].strip()
    return body


# --- normalization stages -------------------------------------------------------------

_Chars = tuple[list[str], list[int], list[int]]


def _fold_characters(text: str) -> _Chars:
    """Drop reference superscripts, apply NFKC, lower-case and fold punctuation."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []

    def emit(piece: str, start: int, end: int) -> None:
        for ch in unicodedata.normalize("NFKC", piece):
            for low in ch.lower():
                folded = _FOLD.get(low, low)
                for out in folded:
                    chars.append(out)
                    starts.append(start)
                    ends.append(end)

    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in _DROPPED_CHARS:
            i += 1
            continue
        if ch in _SUPERSCRIPT_DIGITS or (
            ch in _SUPERSCRIPT_SIGNS
            and i + 1 < n
            and text[i + 1] in _SUPERSCRIPT_DIGITS
        ):
            j = _superscript_run_end(text, i)
            if chars and chars[-1].isdigit():
                # An exponent such as 10⁶: keep it distinguishable from 106.
                chars.append("^")
                starts.append(i)
                ends.append(i + 1)
                emit(text[i:j], i, j)
            i = j
            continue
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        emit(text[i:j], i, j)
        i = j
    return chars, starts, ends


def _superscript_run_end(text: str, i: int) -> int:
    """Return the end of the run of superscript digits (and joiners) starting at i."""
    n = len(text)
    j = i
    while j < n:
        ch = text[j]
        if ch in _SUPERSCRIPT_DIGITS or ch in _SUPERSCRIPT_SIGNS:
            j += 1
        elif (
            ch in _SUPERSCRIPT_JOINERS
            and j + 1 < n
            and text[j + 1] in _SUPERSCRIPT_DIGITS
        ):
            j += 1
        else:
            break
    return j


def _drop_markup(chars: list[str], starts: list[int], ends: list[int]) -> _Chars:
    """Remove table rules, pipes, list bullets and reference markers."""
    drop = [False] * len(chars)
    joined = "".join(chars)
    for match in _TABLE_RULE.finditer(joined):
        for k in range(match.start(), match.end()):
            drop[k] = True
    for start, end in _bullet_ranges(joined):
        for k in range(start, end):
            drop[k] = True
    # Pipes become spaces so that neighbouring table cells do not run together.
    chars = [" " if ch == "|" else ch for ch in chars]
    kept = [k for k in range(len(chars)) if not drop[k]]
    chars = [chars[k] for k in kept]
    starts = [starts[k] for k in kept]
    ends = [ends[k] for k in kept]

    joined = "".join(chars)
    drop = [False] * len(chars)
    for match in _REFERENCE.finditer(joined):
        for k in range(match.start(), match.end()):
            drop[k] = True
    kept = [k for k in range(len(chars)) if not drop[k]]
    return [chars[k] for k in kept], [starts[k] for k in kept], [ends[k] for k in kept]


def _bullet_ranges(text: str) -> list[tuple[int, int]]:
    """Return the ranges of list bullets at line starts.

    A numbered bullet ("1.", "2)") only counts at the start of the text, after a blank
    line, after a line that ends a sentence or after another bullet line: hard-wrapped
    prose (PDF extractions) can start a line with a number that belongs to the
    sentence, as in "below / 130. Patients", and dropping that number would let a
    quote that leaves it out match.
    """
    ranges: list[tuple[int, int]] = []
    previous: str | None = None
    previous_bullet = False
    offset = 0
    for line in text.split("\n"):
        is_bullet = False
        symbol = _SYMBOL_BULLET.match(line)
        number = _NUMBER_BULLET.match(line)
        if symbol:
            ranges.append((offset, offset + symbol.end()))
            is_bullet = True
        elif number:
            tail = (previous or "").rstrip()
            if previous is None or not tail or previous_bullet or tail[-1] in ".:;!?":
                ranges.append((offset, offset + number.end()))
                is_bullet = True
        previous = line
        previous_bullet = is_bullet
        offset += len(line) + 1
    return ranges


def _collapse_spaces(chars: list[str], starts: list[int], ends: list[int]) -> _Chars:
    """Collapse whitespace runs, close gaps before punctuation and trim the ends."""
    out_c: list[str] = []
    out_s: list[int] = []
    out_e: list[int] = []
    for ch, start, end in zip(chars, starts, ends, strict=True):
        if ch.isspace():
            if out_c and out_c[-1] == " ":
                continue
            ch = " "
        out_c.append(ch)
        out_s.append(start)
        out_e.append(end)
    joined = "".join(out_c)
    drop = {m.start() for m in _SPACE_BEFORE_PUNCT.finditer(joined)}
    if joined.startswith(" "):
        drop.add(0)
    if joined.endswith(" "):
        drop.add(len(joined) - 1)
    kept = [k for k in range(len(out_c)) if k not in drop]
    return [out_c[k] for k in kept], [out_s[k] for k in kept], [out_e[k] for k in kept]


# --- elided quotes --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Fragment:
    text: str
    # Normalized fragments too short to match, quoted between this fragment and the
    # previous matched one (or the start of the quote for the first).
    short_before: tuple[str, ...]


def _split_fragments(quote: str) -> tuple[list[_Fragment], tuple[str, ...]]:
    """Split a quote at its ellipses; return matchable fragments and trailing shorts."""
    fragments: list[_Fragment] = []
    shorts: list[str] = []
    for piece in _ELLIPSIS.split(quote):
        norm = normalize(piece)
        if not norm:
            continue
        if len(norm) < MIN_FRAGMENT_CHARS:
            shorts.append(norm)
            continue
        fragments.append(_Fragment(norm, tuple(shorts)))
        shorts = []
    return fragments, tuple(shorts)


def _occurrences(haystack: str, needle: str) -> list[int]:
    found: list[int] = []
    at = haystack.find(needle)
    while at >= 0 and len(found) < _MAX_OCCURRENCES:
        found.append(at)
        at = haystack.find(needle, at + 1)
    return found


def _risky_words(gap: str) -> list[str]:
    return [
        word
        for word in _WORD.findall(gap)
        if word in RISKY_WORDS or word.endswith("n't")
    ]


def _contains_in_order(text: str, pieces: tuple[str, ...]) -> bool:
    at = 0
    for piece in pieces:
        found = text.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def _check_elided(quote: str, section: NormalizedText) -> QuoteCheck:
    fragments, trailing = _split_fragments(quote)
    if len(fragments) < 2:
        return QuoteCheck(
            "fail",
            None,
            f"an elided quote needs at least two fragments of {MIN_FRAGMENT_CHARS}+ "
            f"characters; it has {len(fragments)}",
        )
    text = section.text
    occurrences = [_occurrences(text, fragment.text) for fragment in fragments]
    for number, found in enumerate(occurrences, start=1):
        if not found:
            return QuoteCheck(
                "fail", None, f"fragment {number} does not occur in the section"
            )

    # For each fragment, the placements reachable from the previous fragment in
    # order: any path, and paths whose skipped text is safe. Each maps the start of
    # an occurrence to the start of its predecessor (or -1 for the first fragment).
    first = fragments[0]
    any_paths: list[dict[int, int]] = [dict.fromkeys(occurrences[0], -1)]
    safe_first = [
        at for at in occurrences[0] if _contains_in_order(text[:at], first.short_before)
    ]
    safe_paths: list[dict[int, int]] = [dict.fromkeys(safe_first, -1)]
    reasons: list[str] = []
    if first.short_before and not safe_first:
        reasons.append("a short fragment before fragment 1 is not in the section")

    for index in range(1, len(fragments)):
        fragment = fragments[index]
        prev_len = len(fragments[index - 1].text)
        reach_any: dict[int, int] = {}
        reach_safe: dict[int, int] = {}
        for at in occurrences[index]:
            for prev in any_paths[index - 1]:
                if prev + prev_len <= at:
                    reach_any.setdefault(at, prev)
                    break
            # Tightest placement first: a wider gap contains every word of a
            # narrower one, so once a gap holds a risky word all wider ones do too.
            candidates = [p for p in safe_paths[index - 1] if p + prev_len <= at]
            for prev in reversed(candidates):
                gap = text[prev + prev_len : at]
                risky = _risky_words(gap)
                if risky:
                    reasons.append(
                        f"the text skipped between fragments {index} and {index + 1} "
                        f"contains {risky[0]!r}"
                    )
                    break
                if _contains_in_order(gap, fragment.short_before):
                    reach_safe[at] = prev
                    break
                reasons.append(
                    f"a short fragment between fragments {index} and {index + 1} "
                    "is not in the skipped text"
                )
        if not reach_any:
            return QuoteCheck(
                "fail",
                None,
                "the fragments do not occur in the section in order without overlap",
            )
        any_paths.append(reach_any)
        safe_paths.append(reach_safe)

    last_len = len(fragments[-1].text)
    if trailing:
        safe_last = {
            at: prev
            for at, prev in safe_paths[-1].items()
            if _contains_in_order(text[at + last_len :], trailing)
        }
        if safe_paths[-1] and not safe_last:
            reasons.append(
                "a short fragment after the last fragment is not in the section"
            )
        safe_paths[-1] = safe_last

    if safe_paths[-1]:
        span = _path_span(safe_paths, section, last_len)
        return QuoteCheck("elided", span, f"{len(fragments)} fragments occur in order")
    span = _path_span(any_paths, section, last_len)
    reason = reasons[0] if reasons else "the elision is unsafe"
    return QuoteCheck("elided_risky", span, reason)


def _path_span(
    paths: list[dict[int, int]], section: NormalizedText, last_len: int
) -> tuple[int, int]:
    """Return the original span of the first complete placement in ``paths``."""
    last = min(paths[-1])
    at = last
    for index in range(len(paths) - 1, 0, -1):
        at = paths[index][at]
    return section.original_span(at, last + last_len)
