"""The compared forms of sections and quotes, and quotes as patterns.

:mod:`veriscribe.checks.verbatim` states the matching rules; this module carries
them out. A section and a quote are both folded the same way (NFKC, case, quote and
dash styles, whitespace) with a map back to original offsets. Pieces that may be left
out of a quote but never added to it (reference markers, inline HTML tags, ``**``
emphasis) become *units*; a section's item boundaries (list bullets and labels, blank
lines, table cells, HTML blocks) become *junctions*. A quote is then compiled into a
regular expression over the section's form: its characters in order, with units of
the section allowed between non-word characters, and an item boundary allowed where
the quote has a space, a bullet or ``. ; , :``.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from veriscribe.text.sentences import BLANK_LINES, BULLET_GLYPHS, INLINE_BULLET

__all__ = [
    "JUNCTION_MARK",
    "NormalizedText",
    "SectionForms",
    "has_units",
    "normalize_quote",
    "quote_pattern",
    "readable",
    "section_forms",
    "visible",
]

# --- sentinels ------------------------------------------------------------------------
# Normalized texts carry structure as private-use characters of planes 15 and 16,
# which no input keeps: input characters there are replaced before normalizing.
# Item boundaries ("junctions") take one range of plane 16, one character per item
# label; removable pieces ("units": references, inline tags, emphasis) another, one
# character per distinct content, so that a quote's marker only matches the same
# marker in the section. In the final text each is preceded by a marker of its kind,
# so that a pattern can say "any unit" or "any junction" with a dot instead of a
# character class over a whole plane (which Python's regex compiler builds slowly).

_SENTINEL_FIRST = 0xF0000
JUNCTION_MARK = "\U000f0000"
_UNIT_MARK = "\U000f0001"
_JUNCTION_FIRST, _JUNCTION_LAST = 0x100000, 0x100FFF
_UNIT_FIRST, _UNIT_LAST = 0x101000, 0x10FFFD


class _Interner:
    """Give each distinct content one sentinel character of a range."""

    def __init__(self, first: int, last: int) -> None:
        self._first = first
        self._last = last
        self._chars: dict[str, str] = {}
        self._contents: dict[str, str] = {}
        self._lock = threading.Lock()

    def content(self, char: str) -> str:
        """Return the content a sentinel character was given for."""
        return self._contents.get(char, "")

    def __call__(self, content: str) -> str:
        found = self._chars.get(content)
        if found is not None:
            return found
        with self._lock:
            found = self._chars.get(content)
            if found is None:
                code = self._first + len(self._chars)
                if code < self._last:
                    found = chr(code)
                    self._contents[found] = content
                else:
                    # Past the range's end all further contents share its last
                    # character, with no content: markers then only match markers,
                    # which is never a change of wording.
                    found = chr(self._last)
                self._chars[content] = found
            return found


_junction = _Interner(_JUNCTION_FIRST, _JUNCTION_LAST)
_unit = _Interner(_UNIT_FIRST, _UNIT_LAST)
_PLAIN_JUNCTION = _junction("")

_ANY_JUNCTION = JUNCTION_MARK + "."
_SPACE_OR_JUNCTION = f"(?:\\ |{_ANY_JUNCTION})?"
_UNIT = f"(?:{_UNIT_MARK}.)"
_UNITS = _UNIT + "*"


def _is_junction(ch: str) -> bool:
    return _JUNCTION_FIRST <= ord(ch) <= _JUNCTION_LAST


def _is_unit(ch: str) -> bool:
    return _UNIT_FIRST <= ord(ch) <= _UNIT_LAST


def _is_sentinel(ch: str) -> bool:
    return ord(ch) >= _SENTINEL_FIRST


# --- character classes and patterns ---------------------------------------------------

_SUPERSCRIPT_DIGITS = frozenset("⁰¹²³⁴⁵⁶⁷⁸⁹")
_SUPERSCRIPT_SIGNS = frozenset("⁻⁺")
_SUPERSCRIPT_JOINERS = frozenset(",-–")
_DROPPED_CHARS = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff")

_FOLD: dict[str, str] = {
    **dict.fromkeys("‘’‚‛′‵`´", "'"),
    **dict.fromkeys("“”„‟″‶«»", '"'),
    **dict.fromkeys("‐‑‒–—―−⁃﹘﹣－", "-"),
}

_LABEL = r"(?:\d{1,3}|[a-z]|[ivx]{2,4})"

# Separators are required between repetitions so that the pattern cannot backtrack
# exponentially on long runs of dashes.
_TABLE_RULE = re.compile(
    r"(?m)^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$"
)
_SYMBOL_BULLET = re.compile(rf"[ \t]*[{re.escape(BULLET_GLYPHS)}](?:[ \t]+|$)")
_LABEL_BULLET = re.compile(
    rf"[ \t]*(?:(?P<label>{_LABEL})[.)]|\((?P<plabel>{_LABEL})\))(?:[ \t]+|$)"
)
_HTML_TAG = re.compile(r"</?(?P<name>[a-z][a-z0-9]{0,9})(?:\s[^<>]{0,400})?/?>")
_HTML_BLOCK = frozenset(
    "table thead tbody tfoot tr td th caption col colgroup ul ol li dl dt dd p div "
    "br hr h1 h2 h3 h4 h5 h6 blockquote pre section article header footer".split()
)
_HTML_INLINE = frozenset(
    "b i u s em strong span a sup sub font small big strike mark abbr cite code".split()
)
_EMPHASIS = re.compile(r"\*\*|__")
_EDGE_REFERENCE = "\x00"
_WHITESPACE = re.compile(r"\s+")
_BRACKET_SPACE = re.compile(r"(?<=[\[(]) | (?=[\])])")
_REFERENCE = re.compile(
    r"\[\s*(\d{1,3}(?:\s*[-,;]\s*\d{1,3})*)\s*\]"
    r"|\(\s*(\d{1,3}(?:\s*[-,;]\s*\d{1,3})*)\s*\)"
)
# A bracketed number after one of these, or before a digit or a unit, is a quantity.
_QUANTITY_BEFORE = frozenset("0123456789+-±=<>≤≥~×/^")
_QUANTITY_AFTER = re.compile(
    r"\s*(?:[\d%]|(?:mg|mcg|µg|μg|ug|ng|g|kg|ml|dl|l|mmol|µmol|μmol|mol|meq|mmhg"
    r"|iu|units?|mm|cm|m|h|hrs?|hours?|min|minutes?|days?|d|weeks?|wks?|months?|mo"
    r"|years?|yrs?|y|times|x|per)\b)"
)
_PLAIN_ASCII = re.compile(r"[\x00-\x7f]+")
_SECTION_GAP = re.compile(r"[\s\U000f0000-\U0010ffff]+")
_QUOTE_GAP = re.compile(r"[\s|\U000f0000-\U0010ffff]+")
_SENTINELS = re.compile(r"[\U000f0000-\U0010ffff]")
_CLOSING = frozenset(".,;:!?)]}")
_OPENING = frozenset("([{")


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


@dataclass(frozen=True, slots=True)
class SectionForms:
    """A normalized section with its markers (units), and without them."""

    full: NormalizedText
    bare: NormalizedText


@lru_cache(maxsize=64)
def section_forms(section_text: str) -> SectionForms:
    """Normalize a section, with and without its units."""
    # Many quotes are usually checked against the same few sections.
    full = _normalize(section_text, section=True)
    return SectionForms(full, _without_units(full))


def _without_units(norm: NormalizedText) -> NormalizedText:
    text = norm.text
    if _UNIT_MARK not in text:
        return norm
    out_c: list[str] = []
    out_s: list[int] = []
    out_e: list[int] = []
    copied = 0
    at = text.find(_UNIT_MARK)
    while at >= 0:
        out_c.append(text[copied:at])
        out_s.extend(norm.starts[copied:at])
        out_e.extend(norm.ends[copied:at])
        copied = at + 2  # the mark and its unit
        at = text.find(_UNIT_MARK, copied)
    out_c.append(text[copied:])
    out_s.extend(norm.starts[copied:])
    out_e.extend(norm.ends[copied:])
    return NormalizedText("".join(out_c), tuple(out_s), tuple(out_e))


def has_units(query: str) -> bool:
    """Tell whether a normalized quote copies any unit (marker)."""
    return _UNIT_MARK in query


# --- normalization stages -------------------------------------------------------------

_Chars = tuple[list[str], list[int], list[int]]


def normalize_quote(text: str) -> NormalizedText:
    """Normalize a quote (or one fragment of it) into its compared form."""
    return _normalize(text, section=False)


def _normalize(text: str, *, section: bool) -> NormalizedText:
    """Normalize a section (``section=True``) or a quote into the compared form.

    Both forms fold characters alike and turn reference markers, inline tags and
    emphasis into unit sentinels. A section's item boundaries become junction
    sentinels; a quote keeps its bullets and pipes as written, since the matcher
    only lets them stand where the section has an item boundary.
    """
    chars, starts, ends = _fold_characters(text)
    chars, starts, ends = _mark_structure(chars, starts, ends, section=section)
    chars, starts, ends = _collapse_gaps(chars, starts, ends, section=section)
    return _expand(chars, starts, ends)


def _expand(chars: list[str], starts: list[int], ends: list[int]) -> NormalizedText:
    """Put its kind's marker before each junction and unit."""
    joined = "".join(chars)
    out_c: list[str] = []
    out_s: list[int] = []
    out_e: list[int] = []
    copied = 0
    for match in _SENTINELS.finditer(joined):
        k = match.start()
        out_c.append(joined[copied:k])
        out_s.extend(starts[copied:k])
        out_e.extend(ends[copied:k])
        out_c.append(
            (JUNCTION_MARK if _is_junction(joined[k]) else _UNIT_MARK) + joined[k]
        )
        out_s.extend((starts[k], starts[k]))
        out_e.extend((ends[k], ends[k]))
        copied = k + 1
    out_c.append(joined[copied:])
    out_s.extend(starts[copied:])
    out_e.extend(ends[copied:])
    return NormalizedText("".join(out_c), tuple(out_s), tuple(out_e))


def _fold_characters(text: str) -> _Chars:
    """Turn reference superscripts into units, apply NFKC, lower-case and fold."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []

    def emit(piece: str, start: int, end: int) -> None:
        if piece.isascii():
            # NFKC leaves ASCII alone; only case and the backquote change.
            for out in piece.lower().replace("`", "'"):
                chars.append(out)
                starts.append(start)
                ends.append(end)
            return
        for ch in unicodedata.normalize("NFKC", piece):
            for low in ch.lower():
                folded = _FOLD.get(low, low)
                for out in folded:
                    chars.append("\ufffd" if _is_sentinel(out) else out)
                    starts.append(start)
                    ends.append(end)

    i, n = 0, len(text)
    while i < n:
        plain = _PLAIN_ASCII.match(text, i)
        if plain:
            j = plain.end()
            if j < n and unicodedata.combining(text[j]):
                j -= 1  # that character goes with the marks that follow it
            if j > i:
                chars.extend(text[i:j].lower().replace("`", "'"))
                starts.extend(range(i, j))
                ends.extend(range(i + 1, j + 1))
                i = j
                continue
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
            else:
                content = unicodedata.normalize("NFKC", text[i:j])
                chars.append(_unit("ref:" + content))
                starts.append(i)
                ends.append(j)
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


def _mark_structure(
    chars: list[str], starts: list[int], ends: list[int], *, section: bool
) -> _Chars:
    """Replace markers with unit sentinels, and a section's structure with junctions.

    Each recognized piece becomes one character spanning the original piece; an
    earlier rule wins where two pieces overlap.
    """
    pieces = _structure_pieces("".join(chars), section=section)
    if not pieces:
        return chars, starts, ends
    return _replace_pieces(chars, starts, ends, sorted(pieces))


def _structure_pieces(joined: str, *, section: bool) -> list[tuple[int, int, str]]:
    """Return the markers and structure of a text, each with its replacement.

    Pieces are ``(start, end, replacement)``, in the order the rules found them; a
    piece overlapping one found before it is left out.
    """
    taken = bytearray(len(joined))
    pieces: list[tuple[int, int, str]] = []

    def take(start: int, end: int, replacement: str) -> None:
        if start < end and not any(taken[start:end]):
            taken[start:end] = b"\x01" * (end - start)
            pieces.append((start, end, replacement))

    cell = _PLAIN_JUNCTION if section else "|"
    for match in _TABLE_RULE.finditer(joined):
        take(match.start(), match.end(), cell)
    for match in _HTML_TAG.finditer(joined):
        name = match.group("name")
        if name in _HTML_BLOCK:
            take(match.start(), match.end(), cell)
        elif (
            name == "sup"
            and not match.group(0).startswith("</")
            and match.start() > 0
            and joined[match.start() - 1].isdigit()
        ):
            # An exponent such as 10<sup>6</sup>: keep it apart from 106.
            take(match.start(), match.end(), "^")
        elif name in _HTML_INLINE:
            take(match.start(), match.end(), _unit("tag:" + name))
    if section:
        for start, end, label in _item_starts(joined):
            take(start, end, _junction(label))
        for match in BLANK_LINES.finditer(joined):
            take(match.start(), match.end(), _PLAIN_JUNCTION)
        for match in INLINE_BULLET.finditer(joined):
            take(match.start(), match.end(), _PLAIN_JUNCTION)
        at = joined.find("|")
        while at >= 0:
            take(at, at + 1, _PLAIN_JUNCTION)
            at = joined.find("|", at + 1)
    for match in _REFERENCE.finditer(joined):
        if _is_reference(joined, match.start(), match.end()):
            take(match.start(), match.end(), _reference_unit(joined, match, section))
    for match in _EMPHASIS.finditer(joined):
        take(match.start(), match.end(), _unit("emphasis"))
    return pieces


def _reference_unit(joined: str, match: re.Match[str], section: bool) -> str:
    """Return the sentinel of a reference marker, edge-aware in a quote."""
    content = re.sub(r"\s", "", match.group(1) or match.group(2))
    if section or (joined[: match.start()].strip() and joined[match.end() :].strip()):
        return _unit("ref:" + content)
    # At the edge of a quote the text that tells a reference from a
    # bracketed quantity ("5 (10) mg") is cut off: the quote's marker
    # may then match either.
    literal = _BRACKET_SPACE.sub("", _WHITESPACE.sub(" ", match.group(0)))
    return _unit(f"{_EDGE_REFERENCE}{content}{_EDGE_REFERENCE}{literal}")


def _replace_pieces(
    chars: list[str],
    starts: list[int],
    ends: list[int],
    pieces: list[tuple[int, int, str]],
) -> _Chars:
    """Replace each piece, sorted and apart, by its one character and its span."""
    out_c: list[str] = []
    out_s: list[int] = []
    out_e: list[int] = []
    k = 0
    for start, end, replacement in pieces:
        out_c.extend(chars[k:start])
        out_s.extend(starts[k:start])
        out_e.extend(ends[k:start])
        out_c.append(replacement)
        out_s.append(starts[start])
        out_e.append(ends[end - 1])
        k = end
    out_c.extend(chars[k:])
    out_s.extend(starts[k:])
    out_e.extend(ends[k:])
    return out_c, out_s, out_e


def _is_reference(text: str, start: int, end: int) -> bool:
    """Tell a reference marker from a bracketed quantity such as ``5 (10) mg``."""
    before = start - 1
    while before >= 0 and text[before].isspace():
        before -= 1
    if before >= 0 and text[before] in _QUANTITY_BEFORE:
        return False
    return not _QUANTITY_AFTER.match(text, end)


def _item_starts(text: str) -> list[tuple[int, int, str]]:
    """Return the bullets and item labels at line starts, each with its label.

    A symbol bullet has the label ``""``; ``2.``, ``b)`` and ``(iv)`` have ``2``,
    ``b`` and ``iv``. A label only counts at the start of the text, after a blank
    line, after a line that ends a sentence or a lead-in (``.:;!?``) or after another
    bullet line: hard-wrapped prose (PDF extractions) can start a line with a number
    that belongs to the sentence, as in "below / 130. Patients", and taking that
    number for a label would let a quote that leaves it out match.
    """
    found: list[tuple[int, int, str]] = []
    previous: str | None = None
    previous_bullet = False
    offset = 0
    for line in text.split("\n"):
        is_bullet = False
        symbol = _SYMBOL_BULLET.match(line)
        label = _LABEL_BULLET.match(line)
        if symbol:
            found.append((offset, offset + symbol.end(), ""))
            is_bullet = True
        elif label:
            tail = (previous or "").rstrip()
            if previous is None or not tail or previous_bullet or tail[-1] in ".:;!?":
                name = label.group("label") or label.group("plabel")
                found.append((offset, offset + label.end(), name))
                is_bullet = True
        previous = line
        previous_bullet = is_bullet
        offset += len(line) + 1
    return found


def _collapse_gaps(
    chars: list[str], starts: list[int], ends: list[int], *, section: bool
) -> _Chars:
    """Write each run of whitespace, units and junctions in one canonical form.

    A run holding a junction becomes that junction (the labelled one if any) with
    its units on the side of the first junction they stood on; a quote's run
    holding a pipe becomes `` | `` and its units; any other run becomes one space,
    if it held whitespace and the space is not at either end, before closing
    punctuation or after an opening bracket, followed by its units. Putting units
    after the space lets a marker the quote copies with different spacing still
    line up with the section's.
    """
    out_c: list[str] = []
    out_s: list[int] = []
    out_e: list[int] = []
    joined = "".join(chars)
    n = len(chars)
    copied = 0
    for gap in (_SECTION_GAP if section else _QUOTE_GAP).finditer(joined):
        i, j = gap.start(), gap.end()
        out_c.extend(chars[copied:i])
        out_s.extend(starts[copied:i])
        out_e.extend(ends[copied:i])
        copied = j
        run = range(i, j)
        prev = out_c[-1] if out_c else None
        nxt = chars[j] if j < n else None
        junctions = [k for k in run if _is_junction(chars[k])]
        pipes = [k for k in run if chars[k] == "|"]
        spaces = [k for k in run if chars[k].isspace()]
        units = [k for k in run if _is_unit(chars[k])]
        boundary = junctions or pipes
        if boundary:
            # Units keep their side of the boundary: a marker ending one item
            # ("... record. **[B]**") stays before it, one opening the next after.
            before = [k for k in units if k < boundary[0]]
            units = [k for k in units if k > boundary[0]]
            for k in before:
                out_c.append(chars[k])
                out_s.append(starts[k])
                out_e.append(ends[k])
        if junctions:
            labelled = [k for k in junctions if chars[k] != _PLAIN_JUNCTION]
            out_c.append(chars[(labelled or junctions)[0]])
            out_s.append(min(starts[k] for k in junctions))
            out_e.append(max(ends[k] for k in junctions))
        elif pipes:
            piece = ("" if prev is None else " ") + "|" + ("" if nxt is None else " ")
            for ch in piece:
                out_c.append(ch)
                out_s.append(starts[pipes[0]])
                out_e.append(ends[pipes[-1]])
        elif (
            spaces
            and prev is not None
            and nxt is not None
            and nxt not in _CLOSING
            and prev not in _OPENING
        ):
            out_c.append(" ")
            out_s.append(starts[spaces[0]])
            out_e.append(ends[spaces[-1]])
        for k in units:
            out_c.append(chars[k])
            out_s.append(starts[k])
            out_e.append(ends[k])
    out_c.extend(chars[copied:])
    out_s.extend(starts[copied:])
    out_e.extend(ends[copied:])
    return out_c, out_s, out_e


def readable(norm: NormalizedText) -> NormalizedText:
    """Drop units and write junctions as spaces: the form :func:`normalize` shows."""
    out_c: list[str] = []
    out_s: list[int] = []
    out_e: list[int] = []
    text = norm.text
    for k, ch in enumerate(text):
        if ch == JUNCTION_MARK:
            ch = " "
        elif _is_sentinel(ch):
            continue
        if ch == " " and (not out_c or out_c[-1] == " "):
            continue
        if out_c and out_c[-1] == " " and ch in _CLOSING:
            out_c.pop()
            out_s.pop()
            out_e.pop()
        out_c.append(ch)
        out_s.append(norm.starts[k])
        out_e.append(norm.ends[k])
    if out_c and out_c[-1] == " ":
        out_c.pop()
        out_s.pop()
        out_e.pop()
    return NormalizedText("".join(out_c), tuple(out_s), tuple(out_e))


# --- the quote as a pattern -----------------------------------------------------------

_RUN_BULLET = f"[{re.escape(BULLET_GLYPHS)}|]"


def _run_label(k: int) -> str:
    return (
        rf"(?P<written{k}>(?P<label{k}>{_LABEL})[.)]|\((?P<plabel{k}>{_LABEL})\))"
        rf"{_UNIT}* {_UNIT}*"
    )


# Where a quote may meet an item boundary of the section: a run of punctuation,
# a space, up to two item labels and a bullet, each followed by a space. The quote
# is matched with a space added at either end, so that runs at its start and end
# (". Rosuvastatin", "patients. 2.") are read the same way. Markers the quote
# copies (units) may sit anywhere in a run.
_RUN = re.compile(
    rf"(?P<p>[.;,:])?{_UNIT}* {_UNIT}*(?:{_run_label(1)})?(?:{_run_label(2)})?"
    rf"(?:(?P<bullet>{_RUN_BULLET}){_UNIT}* {_UNIT}*)*"
)


@lru_cache(maxsize=1024)
def quote_pattern(query: str, *, units: bool) -> re.Pattern[str]:
    """Compile a normalized quote into the pattern its section must contain.

    The quote's characters must appear in order; where the quote has a space, a
    bullet, an item label or ``. ; , :`` followed by a space, the section may
    instead have an item boundary (see the module docstring for what may stand
    there). With ``units``, the pattern is for the section with its markers
    (units), which may then stand between any two characters that are not both
    letters or digits; without, for the section with its markers taken out (for a
    quote that copies none).
    """
    return _PatternWriter(units).compile(query)


@dataclass(frozen=True, slots=True)
class _Run:
    """A run of the quote where an item boundary of the section may stand."""

    text: str  # as written, without the added spaces
    mark: str  # the punctuation before the space, or ""
    labels: tuple[tuple[str, str], ...]  # (label, as written) for each label
    bullet: bool
    before: str  # the quote's character before the run, "" at its start
    after: str  # the quote's character after the run, "" at its end

    @property
    def at_start(self) -> bool:
        return not self.before

    @property
    def at_end(self) -> bool:
        return not self.after


class _PatternWriter:
    """Write the pattern of a normalized quote (see :func:`quote_pattern`)."""

    def __init__(self, units: bool) -> None:
        self.units = _UNITS if units else ""

    def compile(self, query: str) -> re.Pattern[str]:
        padded = f" {query} "
        n = len(padded)
        parts: list[str] = []
        segment = 1
        i = 0
        while i < n:
            run = _RUN.match(padded, i) if padded[i] in " .;,:" else None
            if run is None or " " not in run.group(0):
                i += 1
                continue
            parts.append(self.literal(padded[segment:i]))
            found = self.read(run, padded)
            if found.text:  # not just the added space at either end
                parts.append(self.run(found))
            i = segment = run.end()
        return re.compile("".join(parts))

    @staticmethod
    def read(match: re.Match[str], padded: str) -> _Run:
        start, end = match.span()
        labels = tuple(
            (
                match.group(f"label{k}") or match.group(f"plabel{k}"),
                match.group(f"written{k}"),
            )
            for k in (1, 2)
            if match.group(f"written{k}")
        )
        return _Run(
            text=padded[max(start, 1) : min(end, len(padded) - 1)],
            mark=match.group("p") or "",
            labels=labels,
            bullet=bool(match.group("bullet")),
            before=padded[start - 1] if start > 1 else "",
            after=padded[end] if end < len(padded) - 1 else "",
        )

    def literal(self, text: str) -> str:
        """Match text as written (with section units between non-word characters)."""
        if not self.units:
            return re.escape(text)
        out: list[str] = []
        for k, ch in enumerate(text):
            if ch == _UNIT_MARK:
                continue  # written with the unit that follows it
            if _is_unit(ch):
                # A marker at the end of a quote has lost the space (or item
                # boundary) before it that the section keeps: "(2003) [110]" of
                # "(2003) [110] found".
                space = "" if k > 1 and text[k - 2] == " " else _SPACE_OR_JUNCTION
                out.append(space + _unit_pattern(ch))
            else:
                out.append(re.escape(ch))
            if k + 1 < len(text) and ch.isalnum() and text[k + 1].isalnum():
                continue
            out.append(self.units)
        return "".join(out)

    def run(self, run: _Run) -> str:
        """Match a run as written, or as each item boundary it can be read as."""
        options = [self.literal(run.text), *self.junction_readings(run)]
        return "(?:" + "|".join(options) + ")" + self.units

    def junction_readings(self, run: _Run) -> list[str]:
        """Write the ways an item boundary of the section can stand for the run.

        Each of the run's labels may be text of the item before the boundary (a
        label-like last word: "grade 2. Patients", "144 p. * Nelson", whose ``.``
        is then the quote's punctuation), the boundary's own label, or text of the
        item after it; a bullet only stands for an unlabelled boundary. The section
        may have ``; , :`` before the boundary, or a sentence end ``.`` where the
        quote has ``.`` or ``;``; between two digits only the quote's own ``.`` or
        ``;`` may stand there, since a space or a dash would let "10 - 80" match
        "10" ending one item and "80" starting the next.
        """
        readings: list[str] = []
        written = [text for _, text in run.labels]
        for k in range(len(run.labels) + 1):
            label = run.labels[k][0] if k < len(run.labels) else None
            if label is not None and run.bullet:
                continue
            following = " ".join(written[k + 1 :])
            next_text = following + ("" if run.at_end or not following else " ")
            if k == 0:
                head, mark, last = "", run.mark, run.before
            else:
                text = " ".join(written[:k])
                mark = "." if text.endswith(".") else ""
                head = (run.mark + " " if not run.at_start else "") + text[
                    : len(text) - len(mark)
                ]
                last = head[-1]
            reading = self.reading(
                run, head=head, mark=mark, last=last, label=label, next_text=next_text
            )
            if reading:
                readings.append(reading)
        return readings

    def reading(
        self,
        run: _Run,
        *,
        head: str,
        mark: str,
        last: str,
        label: str | None,
        next_text: str,
    ) -> str:
        """Write one reading of a run, or "" when it cannot stand."""
        first = next_text[:1] or run.after
        if last.isdigit() and first.isdigit():
            if mark not in (".", ";"):
                return ""
            punctuation = re.escape(mark)
        elif mark in (".", ";"):
            punctuation = "[.;,:]?"
        else:
            punctuation = "[;,:]?"
        junction = (
            re.escape(JUNCTION_MARK + _junction(label)) if label else _ANY_JUNCTION
        )
        if run.at_start and not head:
            # The quote starts at the boundary: the section's punctuation before
            # it lies outside the quote.
            return self.at_junction(junction, run.text) + self.literal(next_text)
        if run.at_end and label is None and not run.bullet:
            # The quote ends at a boundary it does not reach into.
            return (
                self.literal(head)
                + punctuation
                + self.units
                + f"(?={_ANY_JUNCTION}|\\Z)"
            )
        return (
            self.literal(head)
            + punctuation
            + self.units
            + self.at_junction(junction, run.text)
            + self.literal(next_text)
        )

    def at_junction(self, junction: str, text: str) -> str:
        """Match a junction with the markers a run of the quote copies, either side.

        A quote writes a marker after the space it follows; a section keeps a marker
        on the side of the item boundary it stood on.
        """
        copied = [_unit_pattern(ch) + self.units for ch in text if _is_unit(ch)]
        if not copied:
            return junction + self.units
        splits = (
            "".join(copied[:k]) + junction + self.units + "".join(copied[k:])
            for k in range(len(copied) + 1)
        )
        return "(?:" + "|".join(splits) + ")"


def _unit_pattern(char: str) -> str:
    """Match a unit of the quote: the same unit, or for an edge reference its text."""
    content = _unit.content(char)
    if content.startswith(_EDGE_REFERENCE):
        _, reference, literal = content.split(_EDGE_REFERENCE)
        marker = re.escape(_UNIT_MARK + _unit("ref:" + reference))
        return f"(?:{marker}|{re.escape(literal)})"
    return re.escape(_UNIT_MARK + char)


def visible(query: str) -> str:
    """Return a normalized quote without its sentinels and edge pipes."""
    return "".join(ch for ch in query if not _is_sentinel(ch)).strip(" |")
