"""Quotable units of a section: its sentences and list items, as spans of its text.

Constrained answers may quote only these units (or name them by id), so every quote is a
span of the cited section by construction. Guideline text is often hard-wrapped (PDF
extractions) and full of lists, so a unit ends at a sentence end, at a blank line and
before a list bullet, but not at a bare line break inside a sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import pysbd

MIN_UNIT_CHARS = 20
"""Units shorter than this (headings, page numbers, stray labels) are not quotable."""

MAX_UNIT_CHARS = 600
"""Longer units (run-on table text) are cut at clause ends to keep quotes readable."""

_BLOCK_BREAK = re.compile(r"\n[ \t]*\n\s*")
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
            spans.extend(_sentences(section_text, item_start, item_end))
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


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split one block into sentences with pySBD; line breaks read as spaces."""
    # Same length as the original, so offsets carry over unchanged.
    flat = text[start:end].replace("\n", " ")
    segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)
    spans = [
        _trim(text, start + s.start, start + s.end) for s in segmenter.segment(flat)
    ]
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
