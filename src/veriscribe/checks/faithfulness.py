"""Deterministic checks of an abstract sentence against the article passage it restates.

A small model cannot tell a faithful paraphrase from one with a number, a direction or
a name changed (its probability of "yes" barely moves). These checks can, for the
kinds of change they know, and call no model:

* ``number``: every number of the claim (with its unit and P comparison,
  :mod:`veriscribe.text.numbers`) is stated by the evidence;
* ``entity``: every name-like token of the claim (``IL-6``, ``TP53``, ``HIV``,
  ``mRNA``: letters with digits or two capitals) occurs in the evidence;
* ``direction``: a claim that says a quantity went up (``increased``, ``higher``,
  ``more``) or down (``decreased``, ``lower``, ``less``), or that something was
  ``effective``/``ineffective``, ``positive``/``negative``, has a word of the same
  sense in the evidence clauses about its subject, unless those clauses hold only
  the opposite sense;
* ``negation``: a claim that negates ("did not", "no") has a negation in the
  evidence clauses about its subject;
* ``coverage``: at least :data:`MIN_COVERAGE` of the claim's content words occur in
  the evidence.

:func:`claim_conflict` returns the first failed check and why, or None. What passes
is not proven faithful (a reordered relation, an unsupported addition in words the
evidence also uses): the model judge reads those.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from veriscribe.checks.support import terms
from veriscribe.text.numbers import ArticleNumbers
from veriscribe.text.tokens import ascii_alnum_runs, direction_words, hyphenated_names

__all__ = [
    "DIRECTIONS",
    "MIN_COVERAGE",
    "Conflict",
    "claim_conflict",
    "coverage",
    "entity_tokens",
]

ConflictKind = Literal["number", "entity", "direction", "negation", "coverage"]

MIN_COVERAGE = 0.5
"""Share of the claim's content words the evidence must hold (set on tuning pairs)."""

_DEFINED = re.compile(r"\(([A-Za-z0-9-]+?)s?\)")
_NOT_ENTITIES = frozenset(
    {"CI", "OR", "HR", "RR", "SD", "SE", "SEM", "IQR", "II", "III", "IV", "VI", "US"}
)
"""Statistics and numerals written in capitals: reworded freely, never a subject."""

DIRECTIONS: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (
        frozenset(
            """increase increased increases increasing higher highest more greater
            larger elevated elevation raised rise rises rose risen enhanced enhance
            enhances upregulated upregulation up-regulated gain gains exceeded
            accelerated augmented boosted""".split()
        ),
        frozenset(
            """decrease decreased decreases decreasing lower lowest less fewer smaller
            reduced reduce reduces reduction reductions decline declined declines
            fall fell fallen diminished downregulated downregulation down-regulated
            loss losses attenuated slowed""".split()
        ),
    ),
    (
        frozenset(
            """promote promotes promoted promoting activate activates activated
            activating activation stimulate stimulates stimulated induce induces
            induced""".split()
        ),
        frozenset(
            """inhibit inhibits inhibited inhibiting inhibition repress represses
            repressed repression suppress suppresses suppressed suppression block
            blocks blocked""".split()
        ),
    ),
    (
        frozenset("effective efficacious efficient beneficial".split()),
        frozenset("ineffective inefficient harmful detrimental".split()),
    ),
    (
        frozenset("positive positively".split()),
        frozenset("negative negatively".split()),
    ),
    (
        frozenset("improved improve improves improvement improving better".split()),
        frozenset("worsened worsen worsens worsening worse impaired".split()),
    ),
)
"""Pairs of opposite senses: words saying a quantity or an outcome went one way."""

_CLAUSES = re.compile(
    r"[;:]\s|,\s(?:but|whereas|while|although|however)\b|(?<=[.!?])\s"
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_NEGATIONS = frozenset({"not", "no", "never", "neither", "nor", "cannot", "without"})


@dataclass(frozen=True, slots=True)
class Conflict:
    """Why a claim is not supported by its evidence."""

    kind: ConflictKind
    reason: str

    @property
    def verdict(self) -> Literal["contradicted", "not_supported"]:
        """Return the verdict it stands for: a changed fact contradicts the evidence."""
        if self.kind in ("number", "direction", "negation"):
            return "contradicted"
        return "not_supported"


def entity_tokens(text: str) -> list[str]:
    """Return the name-like tokens of a text: letters with digits, or two capitals.

    A hyphenated token is a name when each of its parts is a name or a number
    (``IL-6``, ``SARS-CoV-2``), not when a word is joined on (``FDA-approved``).
    """
    return [
        token
        for token in hyphenated_names(text)
        if all(_name_like(p) or p.isdigit() for p in ascii_alnum_runs(token))
        and _name_like(ascii_alnum_runs(token)[0])
    ]


def _name_like(token: str) -> bool:
    if token in _NOT_ENTITIES or not token[0].isalpha():
        return False
    capitals = sum(c.isupper() for c in token)
    return capitals >= 2 or bool(capitals and any(c.isdigit() for c in token))


def coverage(claim: str, evidence: str) -> float:
    """Return the share of the claim's content words (stemmed) found in the evidence."""
    said = terms(claim).words
    if not said:
        return 1.0
    return len(said & terms(evidence).words) / len(said)


def _relevant(claim: str, evidence: str) -> list[str]:
    """Return the evidence clauses that share at least two content words with the claim."""
    said = terms(claim).words
    need = min(2, len(said)) or 1
    return [
        clause
        for clause in _CLAUSES.split(evidence)
        if clause.strip() and len(terms(clause).words & said) >= need
    ]


def _defined(claim: str) -> set[str]:
    """Return the abbreviations the claim defines: ``unfolded protein response (UPR)``.

    The letters of the short form must be found, in order, in the words just before
    it, its first letter starting a word (Schwartz and Hearst 2003).
    """
    found = set()
    for match in _DEFINED.finditer(claim):
        short = match.group(1)
        words = claim[: match.start()].split()
        long = " ".join(words[-min(len(short) + 5, 2 * len(short)) :])
        if _expands(long.lower(), short.lower()):
            found.add(short)
    return found


def _expands(long: str, short: str) -> bool:
    at = len(long) - 1
    letters = [c for c in short if c.isalnum()]
    for i in range(len(letters) - 1, -1, -1):
        letter = letters[i]
        while at >= 0 and (
            long[at] != letter or (i == 0 and at > 0 and long[at - 1].isalnum())
        ):
            at -= 1
        if at < 0:
            return False
        at -= 1
    return bool(letters)


def _closest(claim: str, evidence: str) -> str | None:
    """Return the evidence sentence sharing the most content words with the claim."""
    said = terms(claim).words
    best: tuple[int, str] | None = None
    for sentence in _SENTENCES.split(evidence):
        shared = len(terms(sentence).words & said)
        if shared >= 2 and (best is None or shared > best[0]):
            best = (shared, sentence)
    return None if best is None else best[1]


def _direction(claim: str, clauses: Sequence[str]) -> str | None:
    said = direction_words(claim)
    found = (
        frozenset().union(*(direction_words(c) for c in clauses))
        if clauses
        else frozenset()
    )
    for one, other in DIRECTIONS:
        for mine, theirs in ((one, other), (other, one)):
            if (
                said & mine
                and not said & theirs
                and found & theirs
                and not found & mine
            ):
                return (
                    f"the claim says {sorted(said & mine)[0]!r} where the article says "
                    f"{sorted(found & theirs)[0]!r}"
                )
    return None


def claim_conflict(claim: str, evidence: str) -> Conflict | None:
    """Return the first check the claim fails against its evidence, or None."""
    missing = ArticleNumbers.of(evidence).unsupported(claim)
    if missing:
        return Conflict("number", f"the article passage does not state {missing[0]!r}")
    known = {t.lower() for t in ascii_alnum_runs(evidence)}
    defined = _defined(claim)
    for token in entity_tokens(claim):
        for part in ascii_alnum_runs(token):
            if _name_like(part) and part not in defined and part.lower() not in known:
                return Conflict(
                    "entity", f"the article passage does not name {token!r}"
                )
    clauses = _relevant(claim, evidence)
    reason = _direction(claim, clauses)
    if reason is not None:
        return Conflict("direction", reason)
    # Only one way: a paraphrase often drops a negation the article needs
    # ("no change was seen" -> "remained stable"), it rarely adds one.
    closest = _closest(claim, evidence)
    if (
        closest is not None
        and direction_words(claim) & _NEGATIONS
        and not direction_words(closest) & _NEGATIONS
    ):
        return Conflict("negation", "the claim negates what the article states")
    share = coverage(claim, evidence)
    if share < MIN_COVERAGE:
        return Conflict(
            "coverage", f"the article passage holds {share:.0%} of the claim's words"
        )
    return None
