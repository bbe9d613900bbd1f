"""Labelled claim/source pairs for measuring a support judge, built from a corpus.

From each sampled section one quotable unit (a sentence or list item) is the source,
and three claims are made against it:

* ``supported``: the unit itself;
* ``not_supported``: a unit of another section (of another document where there is
  one), sharing at most a third of its content words with the source;
* ``contradicted``: the unit with its negation flipped (``should`` -> ``should not``,
  ``not`` removed, ...) or, when it holds no word to flip, its first number changed.

The pairs are deterministic for a seed. Accuracy, a confusion table and the ROC AUC of
a scored judge (:func:`roc_auc`) say how far a judge can be trusted.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from veriscribe.checks.support import terms
from veriscribe.text.sentences import quotable_units

Label = Literal["supported", "not_supported", "contradicted"]
LABELS: tuple[Label, ...] = ("supported", "not_supported", "contradicted")

MIN_UNIT_CHARS = 50
"""Units shorter than this make poor claims (headings, fragments)."""

_FLIPS: tuple[tuple[str, str], ...] = (
    (r"\bshould not\b", "should"),
    (r"\bshould\b", "should not"),
    (r"\bmust not\b", "must"),
    (r"\bmust\b", "must not"),
    (r"\bdo not\b", "do"),
    (r"\bdoes not\b", "does"),
    (r"\bis not\b", "is"),
    (r"\bare not\b", "are"),
    (r"\bcannot\b", "can"),
    (r"\bis\b", "is not"),
    (r"\bare\b", "are not"),
    (r"\bcan\b", "cannot"),
    (r"\bmay\b", "may not"),
    (r"\b(recommends?|suggests?)\b", r"does not \1"),
    (r"\bwas\b", "was not"),
    (r"\bwere\b", "were not"),
)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.]*\d)")


@dataclass(frozen=True, slots=True)
class JudgePair:
    """One labelled pair: a claim and the source passage it is judged against."""

    id: str
    claim: str
    source: str
    label: Label
    section: str
    how: str


def flip(sentence: str) -> tuple[str, str] | None:
    """Return the sentence with its negation flipped (or a number changed), and how."""
    for pattern, replacement in _FLIPS:
        flipped, count = re.subn(pattern, replacement, sentence, count=1)
        if count:
            return flipped, "negation"
    match = _NUMBER.search(sentence)
    if match:
        value = match.group(1)
        number = float(value)
        changed = number * 2 if number else 1.0
        text = (
            str(int(changed))
            if changed.is_integer() and "." not in value
            else f"{changed:g}"
        )
        return sentence[: match.start(1)] + text + sentence[match.end(1) :], "number"
    return None


def build_pairs(
    sections: Sequence[tuple[str, str]], count: int, seed: int = 0
) -> list[JudgePair]:
    """Build up to ``count`` sources' worth of labelled pairs from (key, text) sections.

    Each chosen source yields one pair of each label that can be made for it.
    """
    rng = random.Random(seed)
    units = {
        key: [u.text for u in quotable_units(text) if len(u.text) >= MIN_UNIT_CHARS]
        for key, text in sections
    }
    keys = [key for key in units if units[key]]
    rng.shuffle(keys)
    pairs: list[JudgePair] = []
    for key in keys[:count]:
        source = rng.choice(units[key])
        pairs.append(
            JudgePair(f"{key}#s", source, source, "supported", key, "same unit")
        )
        other = _other_unit(key, keys, units, source, rng)
        if other is not None:
            pairs.append(
                JudgePair(
                    f"{key}#n", other, source, "not_supported", key, "other section"
                )
            )
        flipped = flip(source)
        if flipped is not None:
            pairs.append(
                JudgePair(
                    f"{key}#c", flipped[0], source, "contradicted", key, flipped[1]
                )
            )
    return pairs


def _other_unit(
    key: str,
    keys: Sequence[str],
    units: dict[str, list[str]],
    source: str,
    rng: random.Random,
) -> str | None:
    doc = key.partition(":")[0]
    others = [k for k in keys if k.partition(":")[0] != doc] or [
        k for k in keys if k != key
    ]
    words = terms(source).words
    for _ in range(20):
        if not others:
            return None
        candidate = rng.choice(units[rng.choice(others)])
        shared = terms(candidate).words & words
        if len(shared) <= len(terms(candidate).words) / 3:
            return candidate
    return None


def roc_auc(scores: Sequence[float], positives: Sequence[bool]) -> float | None:
    """Return the ROC AUC of scores for the positive class (ties count half)."""
    pos = [s for s, p in zip(scores, positives, strict=True) if p]
    neg = [s for s, p in zip(scores, positives, strict=True) if not p]
    if not pos or not neg:
        return None
    wins = 0.0
    for p in pos:
        for n in neg:
            wins += 1.0 if p > n else 0.5 if p == n else 0.0
    return wins / (len(pos) * len(neg))
