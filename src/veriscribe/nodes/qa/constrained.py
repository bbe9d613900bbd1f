"""Constrained citations: the answer may cite only sections read, and quote only their units.

The sections read are split into quotable units (sentences and list items, see
:func:`veriscribe.text.sentences.quotable_units`). The answer's JSON schema then
admits, for each sentence, either a section id read plus one of that section's units
word for word (``cite_by="quote"``), or the id of a unit (``S1``, ``S2``, ... in
reading order; ``cite_by="id"``), which the code turns into the section and the unit's
text. Backends that constrain decoding (llama.cpp grammars, Ollama ``format``,
JSON-schema servers) cannot then write an out-of-section quote; the verifier checks
every quote anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from veriscribe.nodes.qa.state import AnswerSentence, CitationRef
from veriscribe.store.corpora import SectionRow
from veriscribe.text.sentences import quotable_units

SENTENCE_CHARS = 300
"""Longest answer sentence the schema admits (small models loop)."""


@dataclass(frozen=True, slots=True)
class SourceUnit:
    """A quotable unit of a section read, with its id in the prompt."""

    id: str
    key: str
    text: str


@dataclass(frozen=True)
class SourceUnits:
    """The quotable units of the sections read, in reading order."""

    units: tuple[SourceUnit, ...]

    def of(self, key: str) -> list[SourceUnit]:
        """Return the units of one section."""
        return [unit for unit in self.units if unit.key == key]

    @property
    def keys(self) -> list[str]:
        """Return the keys of the sections that have units, in order."""
        return list(dict.fromkeys(unit.key for unit in self.units))

    def resolve(self, items: Sequence[tuple[str, str]]) -> list[AnswerSentence]:
        """Turn (unit id, sentence) pairs into answer sentences citing the unit's text.

        An empty sentence stands for the unit's own text. An id that names no unit is
        kept as an unresolved citation, so the check reports it instead of hiding it;
        a sentence said twice is kept once.
        """
        by_id = {unit.id.lower(): unit for unit in self.units}
        out: list[AnswerSentence] = []
        seen: set[str] = set()
        for raw_id, written in items:
            unit = by_id.get(raw_id.strip().strip("[]").lower())
            text = written or (unit.text if unit is not None else "")
            if not text or text.lower() in seen:
                continue
            seen.add(text.lower())
            if unit is None:
                ref = CitationRef(doc_id="unknown", section_id="unknown", quote=raw_id)
            else:
                doc_id, _, section_id = unit.key.partition(":")
                ref = CitationRef(doc_id=doc_id, section_id=section_id, quote=unit.text)
            out.append(AnswerSentence(text=text, citations=[ref]))
        return out


def units_of(chosen: Sequence[tuple[SectionRow, str | None]]) -> SourceUnits:
    """Number the quotable units of the sections shown (the part shown, if cut)."""
    units: list[SourceUnit] = []
    for section, part in chosen:
        text = section.text if part is None else part
        for unit in quotable_units(text):
            units.append(SourceUnit(f"S{len(units) + 1}", section.key, unit.text))
    return SourceUnits(tuple(units))


def _sentence_schema() -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": SENTENCE_CHARS}


def _answer_schema(item: dict[str, Any], max_items: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "sentences": {"type": "array", "items": item, "maxItems": max_items}
        },
        "required": ["sentences"],
    }


def quote_constraint(
    units: SourceUnits, max_items: int, *, own_words: bool = True
) -> dict[str, Any]:
    """Return the answer schema that admits only units of the cited section as quotes.

    Each sentence is an object whose ``section_id`` is one section read and whose
    ``quote`` is one of that section's units, then (``own_words``) the sentence itself:
    the quote is chosen first, and the sentence is written with it in view.
    """
    more = {"sentence": _sentence_schema()} if own_words else None
    return _answer_schema(span_item(units, "quote", more), max_items)


def span_item(
    units: SourceUnits, field: str, more: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Return the schema of an object naming a section read and one unit of it.

    Args:
        units: The quotable units of the sections read.
        field: The name of the field that holds the unit's text.
        more: Further properties, after those two.
    """
    options = [
        {
            "type": "object",
            "properties": {
                "section_id": {"type": "string", "enum": [key]},
                field: {"type": "string", "enum": [u.text for u in units.of(key)]},
                **(more or {}),
            },
            "required": ["section_id", field, *(more or {})],
        }
        for key in units.keys
    ]
    return options[0] if len(options) == 1 else {"anyOf": options}


def unit_constraint(
    units: SourceUnits, max_items: int, *, own_words: bool = True
) -> dict[str, Any]:
    """Return the answer schema that admits only unit ids as sources."""
    properties: dict[str, Any] = {
        "source": {"type": "string", "enum": [u.id for u in units.units]}
    }
    if own_words:
        properties["sentence"] = _sentence_schema()
    item = {"type": "object", "properties": properties, "required": list(properties)}
    return _answer_schema(item, max_items)
