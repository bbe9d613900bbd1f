"""Deterministic support checks of a claim against the source text its quote spans.

Three plain functions the support judge builds on, none of which calls a model:

* :func:`lexical_verdict` — the lexical lane. A claim that restates one sentence (or
  clause) of the source, with the same content words in the same order, the same
  numbers and the same negation, polarity and strength words, is ``fully_supported``
  without a model call; the same restatement with the negation flipped or a number
  changed is ``contradicted``. Anything else is left to the model.
* :func:`certification_guard` — why a model's "yes" may not certify a claim: a number
  of the claim that the source does not state, or a clause of the source about the
  claim's subject whose negation or polarity word the claim drops ("Avoid aspirin in
  children" does not certify "Aspirin is recommended for children").
* :func:`shortfall_of` — which kind of partial support a claim shows
  (``unsupported_addition``, ``strength_inflation``, ``scope_inflation``).

Words are compared lower-cased and stemmed (Porter2), stop words aside; negation,
polarity and strength words are never stop words here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import Stemmer

from veriscribe.checks.verbatim import check_quote
from veriscribe.results import Shortfall
from veriscribe.text.sentences import quotable_units, quote_text
from veriscribe.text.tokens import support_tokens

_CLAUSE = re.compile(r"[;:]\s|,\s(?:but|whereas|while|although|however)\b|\.\s")

NEGATIONS: frozenset[str] = frozenset(
    {"not", "no", "never", "none", "neither", "nor", "cannot", "without", "non"}
)
"""Words that reverse a statement (``n't`` forms are read as ``not``)."""

POLARITY: frozenset[str] = frozenset(
    {
        "avoid",
        "avoided",
        "avoiding",
        "contraindicated",
        "contraindication",
        "contraindications",
        "discontinue",
        "discontinued",
        "discontinuation",
        "withhold",
        "withheld",
        "stop",
        "stopped",
        "cease",
        "refrain",
        "against",
        "harmful",
        "unsafe",
        "insufficient",
        "inadequate",
        "unless",
        "except",
    }
)
"""Words that turn a recommendation against what they qualify."""

STRENGTH: dict[str, int] = {
    "must": 3,
    "required": 3,
    "always": 3,
    "shall": 3,
    "should": 2,
    "recommend": 2,
    "recommended": 2,
    "recommends": 2,
    "suggest": 1,
    "suggested": 1,
    "suggests": 1,
    "consider": 1,
    "considered": 1,
    "may": 1,
    "might": 1,
    "can": 1,
    "could": 1,
    "option": 1,
    "reasonable": 1,
}
"""Words that set how strongly a statement is made, with a rough rank."""

_STOP: frozenset[str] = frozenset(
    """a an the and or of to in on at by for with from as is are was were be been being
    this that these those it its their there which who whom whose what when where how
    than then also such into onto over under about per via just do does did done has
    have had having i we you he she they them our your his her us so""".split()
)
"""Function words whose loss or addition changes no clinical content.

Negations, polarity and strength words are not among them, nor are words of scope and
quantity (``all``, ``only``, ``any``, ``most``): dropping those can widen a claim.
"""

Lexical = Literal["fully_supported", "contradicted"]


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    return Stemmer.Stemmer("english")


@dataclass(frozen=True, slots=True)
class Terms:
    """The comparable parts of a text.

    Attributes:
        content: Stemmed content words in order (numbers, negations, polarity and
            strength words excluded).
        numbers: Numbers in order, as written without thousands separators.
        negation: How many negations the text holds.
        polarity: Polarity words (stemmed), counted.
        strength: Strength words, counted.
    """

    content: tuple[str, ...]
    numbers: tuple[str, ...]
    negation: int
    polarity: tuple[tuple[str, int], ...]
    strength: tuple[tuple[str, int], ...]

    @property
    def words(self) -> frozenset[str]:
        """Return the set of content words."""
        return frozenset(self.content)


@lru_cache(maxsize=4096)
def terms(text: str) -> Terms:
    """Return the comparable parts of a text."""
    stem = _stemmer().stemWord
    content: list[str] = []
    numbers: list[str] = []
    negation = 0
    polarity: Counter[str] = Counter()
    strength: Counter[str] = Counter()
    for raw in support_tokens(text):
        if raw[0].isdigit():
            numbers.append(_number(raw))
            continue
        if raw.endswith("n't"):
            negation += 1
            raw = raw[:-3]
            if raw in ("ca", "wo", "sha"):
                continue
        if raw in NEGATIONS:
            negation += 1
        elif raw in POLARITY:
            polarity[stem(raw)] += 1
        elif raw in STRENGTH:
            strength[raw] += 1
        elif raw not in _STOP and len(raw) > 1:
            content.append(stem(raw))
    return Terms(
        tuple(content),
        tuple(numbers),
        negation,
        tuple(sorted(polarity.items())),
        tuple(sorted(strength.items())),
    )


def _number(raw: str) -> str:
    text = raw.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", raw) else raw
    if "." in text:
        text = text.rstrip("0").rstrip(".") or "0"
    return text


def source_units(source: str) -> list[str]:
    """Return the source, its sentences and its clauses: what a claim may restate."""
    units = [source, *(unit.text for unit in quotable_units(source))]
    clauses = []
    for unit in units:
        parts = [p for p in _CLAUSE.split(unit) if p.strip()]
        if len(parts) > 1:
            clauses.extend(parts)
    return units + clauses


@lru_cache(maxsize=4096)
def sequence(text: str) -> tuple[str, ...]:
    """Return every word of a text in order, stemmed, and its numbers as written.

    Only ``the`` and ``an`` are dropped: any other word, however small, can carry
    meaning ("drug A" against "drug B"). ``n't`` is read as ``not``.
    """
    stem = _stemmer().stemWord
    out: list[str] = []
    for raw in support_tokens(text):
        if raw[0].isdigit():
            out.append(_number(raw))
            continue
        if raw.endswith("n't"):
            base = raw[:-3]
            if base not in ("ca", "wo", "sha"):
                out.append(stem(base))
            out.append("not")
            continue
        if raw in ("the", "an"):
            continue
        out.append("not" if raw in NEGATIONS else stem(raw))
    return tuple(out)


def lexical_verdict(claim: str, source: str) -> Lexical | None:
    """Return the lexical lane's verdict, or None when the model must decide.

    ``fully_supported`` when the claim restates one sentence or clause of the source
    word for word (stems, numbers, negations; only ``the`` and ``an`` may differ).
    ``contradicted`` when it does so except for its negations (an odd number added or
    removed) or except for its numbers (the same count, other values).
    """
    said = sequence(claim)
    if len(terms(claim).content) < 2:
        return None
    flipped = False
    for unit in source_units(source):
        found = sequence(unit)
        if found == said:
            return "fully_supported"
        if _unnegated(found) == _unnegated(said):
            if (found.count("not") - said.count("not")) % 2:
                flipped = True
        elif _masked(found) == _masked(said) and _numbers(found) != _numbers(said):
            flipped = True
    return "contradicted" if flipped else None


_NEGATION_SUPPORT = frozenset({"not", "do", "doe", "did"})
"""A negation and the auxiliary that carries it ("does not recommend")."""


def _unnegated(tokens: Sequence[str]) -> list[str]:
    return [t for t in tokens if t not in _NEGATION_SUPPORT]


def _masked(tokens: Sequence[str]) -> list[str]:
    return ["#" if t[0].isdigit() else t for t in tokens]


def _numbers(tokens: Sequence[str]) -> list[str]:
    return [t for t in tokens if t[0].isdigit()]


def certification_guard(claim: str, source: str) -> str | None:
    """Return why the claim may not be certified from this source, or None.

    Checked before a model's verdict can certify: every number of the claim must occur
    in the source, and every clause of the source that shares at least two content
    words with the claim (or all of them, for a shorter claim) must carry no negation,
    polarity or strength word that the claim lacks, nor lack one that the claim has.
    """
    said = terms(claim)
    whole = terms(source)
    missing = [n for n in said.numbers if n not in whole.numbers]
    if missing:
        return f"the source does not state the number {missing[0]}"
    need = min(2, len(said.words)) or 1
    relevant = [
        found
        for unit in _clauses(source)
        if len((found := terms(unit)).words & said.words) >= need
    ]
    if not relevant:
        return None
    said_polarity = {word for word, _ in said.polarity}
    for found in relevant:
        dropped = {word for word, _ in found.polarity} - said_polarity
        if dropped:
            return f"the source says {sorted(dropped)[0]!r} where the claim does not"
        if found.negation and not said.negation:
            return "the source negates what the claim states"
    if said.negation and not any(found.negation for found in relevant):
        return "the claim negates what the source states"
    if said_polarity - {w for found in relevant for w, _ in found.polarity}:
        return "the claim says what the source does not recommend against"
    said_rank = max((STRENGTH[w] for w, _ in said.strength), default=0)
    source_rank = max(
        (STRENGTH[w] for found in relevant for w, _ in found.strength), default=0
    )
    if source_rank and said_rank > source_rank:
        return "the claim is stronger than the source"
    return None


def self_certifies(text: str, section_text: str) -> bool:
    """Tell whether a span of a section, cited as a claim of its own, is certified.

    The same checks an answer's claim meets: the quote's source passage (the whole
    sentences around it) as the verifier finds it, the lexical lane's restatement,
    and the certification guard, which may refuse even a restatement (a clause of a
    longer sentence that leaves out its negation).
    """
    found = check_quote(text, section_text)
    around = found.context_span or found.span
    if around is None:
        return False
    source = quote_text(section_text, *around)
    return (
        lexical_verdict(text, source) == "fully_supported"
        and certification_guard(text, source) is None
    )


def _clauses(source: str) -> list[str]:
    units = [unit.text for unit in quotable_units(source)] or [source]
    out: list[str] = []
    for unit in units:
        out.extend(p for p in _CLAUSE.split(unit) if p.strip())
    return out


def shortfall_of(claim: str, sources: Sequence[str]) -> Shortfall:
    """Classify how a partly supported claim goes beyond its sources."""
    said = terms(claim)
    found = [terms(s) for s in sources]
    said_rank = max((STRENGTH[w] for w, _ in said.strength), default=0)
    source_rank = max((STRENGTH[w] for t in found for w, _ in t.strength), default=0)
    if source_rank and said_rank > source_rank:
        return "strength_inflation"
    widening = {"all", "every", "alway", "ani", "everyon"}
    if said.words & widening and not any(t.words & widening for t in found):
        return "scope_inflation"
    return "unsupported_addition"
