"""Citation markers in answers, claim units, and the attribution window.

An answer cites with inline markers ``{{cite:<doc_id>:<section_id>|<verbatim quote>}}``.
The ``doc_id`` holds no colon, so the marker splits at the first colon: everything
after it up to the first ``|`` is the ``section_id``, which may itself contain colons
(but neither ``|`` nor braces). The quote runs from that ``|`` to the first ``}}``, so
it may contain ``|`` but not ``}}``.

Turning an answer into claim units follows paper appendix A.7: flatten the Markdown,
strip the markers while recording where each sat, split the prose into sentences with
pySBD, and drop pieces under 15 characters. Deciding which of those sentences state a
claim is left to the claim filter; the functions here take its verdicts as
``is_claim`` flags.

Attribution follows appendix A.8. Each marker has an *anchor*: the last sentence that
starts before the marker's position, i.e. the sentence the marker sits inside or right
after. With window ``k >= 1`` a marker credits the ``k`` claim sentences nearest to it
at or before its anchor, counting claim sentences only (non-claim sentences are passed
over), and never reaching a sentence at or before the anchor of the previous marker.
With ``k = 0`` a marker credits only its anchor sentence, and only if that sentence is
a claim. Markers that share an anchor (several citations after one sentence) share its
window: the barrier is the nearest earlier marker with an earlier anchor.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from veriscribe.text.sentences import Sentence, claim_sentences

MARKER_RE = re.compile(
    r"\{\{\s*cite\s*:(?P<doc>[^:|{}]*):(?P<section>[^|{}]*)\|(?P<quote>.*?)\}\}",
    re.DOTALL,
)

# Markers are swapped for these while Markdown is flattened so that nothing inside a
# quote is rewritten; private-use code points never occur in real answers.
_HOLD_OPEN = "\ue000"
_HOLD_CLOSE = "\ue001"
_HOLD_RE = re.compile(f"{_HOLD_OPEN}(\\d+){_HOLD_CLOSE}")

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$")
_SETEXT_RULE = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_HRULE = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(.*)$")
_QUOTE_PREFIX = re.compile(r"^\s{0,3}>\s?")
_TABLE_ROW = re.compile(r"^\s*\|(.*)\|?\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC_STAR = re.compile(r"(?<![*\w])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![*\w])")
_ITALIC_UNDERSCORE = re.compile(r"(?<![_\w])_(?=\S)([^_\n]+?)(?<=\S)_(?![_\w])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_CODE = re.compile(r"`([^`\n]+)`")
_BREAK_TAG = re.compile(r"<br\s*/?>", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Marker:
    """One citation marker found in a text.

    Attributes:
        doc_id: The cited document.
        section_id: The cited section within the document.
        quote: The quote, with surrounding whitespace removed.
        start: Offset of the marker's first character in the text it was parsed from.
        end: Offset just past the marker's last character.
    """

    doc_id: str
    section_id: str
    quote: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class MarkerPosition:
    """Where a marker sat once the markers are stripped from a text.

    Attributes:
        index: The marker's index in the list of markers, in order of appearance.
        offset: The offset in the stripped text at which the marker sat.
        removed: The exact text removed at ``offset``: the marker and the spaces
            directly before it. Inserting it back restores the original text.
    """

    index: int
    offset: int
    removed: str


@dataclass(frozen=True, slots=True)
class ClaimSplit:
    """An answer split into sentences, with its markers and where they sat.

    Attributes:
        text: The flattened answer with the markers stripped; sentence and marker
            offsets refer to it.
        sentences: The sentences of at least ``MIN_CLAIM_SENTENCE_CHARS`` characters.
        markers: The markers, in order, parsed from the flattened answer.
        positions: One position per marker, in the same order.
    """

    text: str
    sentences: list[Sentence]
    markers: list[Marker]
    positions: list[MarkerPosition]


def format_marker(doc_id: str, section_id: str, quote: str) -> str:
    """Write a citation marker for a quote from a section."""
    if ":" in doc_id or "|" in doc_id or not doc_id.strip():
        raise ValueError(f"invalid doc_id for a citation marker: {doc_id!r}")
    if "|" in section_id or "{" in section_id or "}" in section_id:
        raise ValueError(f"invalid section_id for a citation marker: {section_id!r}")
    if "}}" in quote:
        raise ValueError("a quote in a citation marker cannot contain '}}'")
    return f"{{{{cite:{doc_id}:{section_id}|{quote}}}}}"


def parse_markers(text: str) -> list[Marker]:
    """Find every citation marker in a text, in order."""
    return [
        Marker(
            doc_id=match["doc"].strip(),
            section_id=match["section"].strip(),
            quote=match["quote"].strip(),
            start=match.start(),
            end=match.end(),
        )
        for match in MARKER_RE.finditer(text)
    ]


def strip_markers(text: str) -> tuple[str, list[MarkerPosition]]:
    """Remove the citation markers from a text, recording where each one sat.

    The spaces and tabs directly before a marker go with it, so that
    ``"Statins lower LDL {{cite:...}}."`` becomes ``"Statins lower LDL."`` and the
    marker's offset is the end of ``"LDL"``.
    """
    pieces: list[str] = []
    positions: list[MarkerPosition] = []
    length = 0
    cursor = 0
    for index, match in enumerate(MARKER_RE.finditer(text)):
        kept = text[cursor : match.start()]
        trimmed = kept.rstrip(" \t")
        pieces.append(trimmed)
        length += len(trimmed)
        removed = kept[len(trimmed) :] + match.group()
        positions.append(MarkerPosition(index=index, offset=length, removed=removed))
        cursor = match.end()
    pieces.append(text[cursor:])
    return "".join(pieces), positions


def restore_markers(stripped: str, positions: Iterable[MarkerPosition]) -> str:
    """Put stripped markers back into the text; the inverse of `strip_markers`."""
    out = stripped
    for position in sorted(positions, key=lambda p: (p.offset, p.index), reverse=True):
        out = out[: position.offset] + position.removed + out[position.offset :]
    return out


def flatten_markdown(text: str) -> str:
    """Reduce Markdown to plain prose, keeping citation markers intact.

    Headings, list items and table rows each become a paragraph of their own (so that
    the sentence splitter never runs one into the next sentence), bullets and
    numbering are dropped, emphasis, code spans and links are reduced to their text,
    block quotes lose their ``>`` and rules and code fences disappear.
    """
    held: list[str] = []

    def hold(match: re.Match[str]) -> str:
        held.append(match.group())
        return f"{_HOLD_OPEN}{len(held) - 1}{_HOLD_CLOSE}"

    body = MARKER_RE.sub(hold, text.replace("\r\n", "\n"))
    body = _BREAK_TAG.sub("\n", body)
    blocks: list[list[str]] = [[]]

    def start_block(line: str, *, close: bool) -> None:
        if blocks[-1]:
            blocks.append([])
        blocks[-1].append(line)
        if close:
            blocks.append([])

    for raw in body.split("\n"):
        line = _QUOTE_PREFIX.sub("", raw)
        if _FENCE.match(line) or _HRULE.match(line) or _TABLE_RULE.match(line):
            if blocks[-1]:
                blocks.append([])
            continue
        if not line.strip():
            if blocks[-1]:
                blocks.append([])
            continue
        heading = _HEADING.match(line)
        if heading:
            start_block(heading.group(1), close=True)
            continue
        if _SETEXT_RULE.match(line) and blocks[-1]:
            # The line above was a setext heading: close it as a paragraph.
            blocks.append([])
            continue
        row = _TABLE_ROW.match(line)
        if row:
            cells = [cell.strip() for cell in row.group(1).split("|")]
            start_block("; ".join(cell for cell in cells if cell), close=True)
            continue
        item = _LIST_ITEM.match(line)
        if item:
            # Continuation lines that follow join the item's paragraph.
            start_block(item.group(1), close=False)
            continue
        blocks[-1].append(line.strip())

    paragraphs = [" ".join(_inline(line) for line in block) for block in blocks]
    flat = "\n\n".join(p for p in paragraphs if p.strip())
    return _HOLD_RE.sub(lambda m: held[int(m.group(1))], flat)


def _inline(line: str) -> str:
    """Reduce inline Markdown in one line to its text."""
    line = _IMAGE.sub(r"\1", line)
    line = _LINK.sub(r"\1", line)
    line = _REF_LINK.sub(r"\1", line)
    line = _CODE.sub(r"\1", line)
    line = _BOLD.sub(r"\2", line)
    line = _STRIKE.sub(r"\1", line)
    line = _ITALIC_STAR.sub(r"\1", line)
    return _ITALIC_UNDERSCORE.sub(r"\1", line)


def split_claim_units(answer: str) -> ClaimSplit:
    """Split an answer into candidate claim sentences and marker positions."""
    flat = flatten_markdown(answer)
    markers = parse_markers(flat)
    stripped, positions = strip_markers(flat)
    return ClaimSplit(
        text=stripped,
        sentences=claim_sentences(stripped),
        markers=markers,
        positions=positions,
    )


def split_structured(sentences: Sequence[tuple[str, Sequence[Marker]]]) -> ClaimSplit:
    """Lay out structured answer sentences as a split, without parsing any text.

    Each item is split into sentences as `split_claim_units` would split it (a short
    item is one unit, whatever its length), and its markers sit at its end, where
    `split_claim_units` would find them in the rendered answer.
    """
    units: list[Sentence] = []
    markers: list[Marker] = []
    positions: list[MarkerPosition] = []
    pieces: list[str] = []
    length = 0
    for text, cited in sentences:
        if pieces:
            pieces.append(" ")
            length += 1
        found = claim_sentences(text) or [Sentence(text, 0, len(text))]
        units.extend(Sentence(s.text, length + s.start, length + s.end) for s in found)
        pieces.append(text)
        length += len(text)
        for marker in cited:
            positions.append(MarkerPosition(len(markers), length, ""))
            markers.append(marker)
    return ClaimSplit("".join(pieces), units, markers, positions)


def anchor_of(offset: int, sentences: Sequence[Sentence]) -> int:
    """Return the index of the last sentence starting before ``offset``, or -1."""
    anchor = -1
    for index, sentence in enumerate(sentences):
        if sentence.start < offset:
            anchor = index
        else:
            break
    return anchor


def attribute(
    sentences: Sequence[Sentence],
    marker_positions: Sequence[MarkerPosition],
    k: int,
    *,
    is_claim: Sequence[bool] | None = None,
) -> list[list[int]]:
    """Return, for each sentence, the indices of the markers that credit it.

    Args:
        sentences: All sentences of the answer, in order (claims and non-claims).
        marker_positions: Where each marker sat in the stripped text.
        k: The attribution window: how many claim sentences a marker credits.
        is_claim: Per sentence, whether it states a claim; all are claims if omitted.

    Returns:
        One list of marker indices (``MarkerPosition.index``) per sentence; a
        sentence that is not a claim is never credited and gets an empty list.
    """
    if k < 0:
        raise ValueError("the attribution window k must be >= 0")
    claims = _claim_flags(sentences, is_claim)
    credits: list[list[int]] = [[] for _ in sentences]
    ordered = sorted(marker_positions, key=lambda p: (p.offset, p.index))
    anchors = [anchor_of(p.offset, sentences) for p in ordered]
    barrier = -1  # the anchor of the nearest earlier marker with an earlier anchor
    group_anchor = -1
    for position, anchor in zip(ordered, anchors, strict=True):
        if anchor != group_anchor:
            barrier = group_anchor
            group_anchor = anchor
        if anchor < 0:
            continue
        if k == 0:
            if claims[anchor]:
                credits[anchor].append(position.index)
            continue
        taken = 0
        for index in range(anchor, barrier, -1):
            if taken == k:
                break
            if claims[index]:
                credits[index].append(position.index)
                taken += 1
    return credits


def coverage(
    sentences: Sequence[Sentence],
    marker_positions: Sequence[MarkerPosition],
    k: int,
    *,
    is_claim: Sequence[bool] | None = None,
) -> float:
    """Return the fraction of claim sentences credited by at least one marker.

    An answer without claim sentences has coverage 0.0.
    """
    claims = _claim_flags(sentences, is_claim)
    total = sum(claims)
    if total == 0:
        return 0.0
    credits = attribute(sentences, marker_positions, k, is_claim=claims)
    covered = sum(1 for flag, got in zip(claims, credits, strict=True) if flag and got)
    return covered / total


def coverage_by_window(
    sentences: Sequence[Sentence],
    marker_positions: Sequence[MarkerPosition],
    windows: Iterable[int] = range(6),
    *,
    is_claim: Sequence[bool] | None = None,
) -> dict[int, float]:
    """Return the coverage for each attribution window (by default k = 0..5)."""
    return {
        k: coverage(sentences, marker_positions, k, is_claim=is_claim) for k in windows
    }


def _claim_flags(
    sentences: Sequence[Sentence], is_claim: Sequence[bool] | None
) -> list[bool]:
    if is_claim is None:
        return [True] * len(sentences)
    if len(is_claim) != len(sentences):
        raise ValueError(
            f"is_claim has {len(is_claim)} flags for {len(sentences)} sentences"
        )
    return list(is_claim)
