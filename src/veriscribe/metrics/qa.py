"""Claim-level metrics of cited answers (verifiable-by-construction paper, sec. 3.2).

Each claim sentence (a sentence the claim filter kept) is summarised by a
``ClaimRecord``; each citation the model emitted by its verbatim tier. Claims are
pooled over all the answers being scored, as in the paper's per-model tables.

Denominators, as the paper's tables use them:

- citation coverage CC: covered claims / all claims (a claim is covered when a
  marker credits it under the attribution window, k = 1 by default);
- verbatim compliance rate VCR: compliant citations / all citations emitted,
  overall and split by tier (``exact`` + ``normalized`` + ``elided`` = VCR); a quote
  whose cited section does not exist (``unresolved``) fails like ``fail``;
- claim support rate CSR: over the *cited* claims only, those with at least one
  verbatim-compliant quote; strict counts ``fully_supported``, lenient adds
  ``partially_supported``. A cited claim left without a verdict (the judge gave
  none) stays in the denominator and supports nothing;
- certified claim rate CCR: cited and fully supported claims / all claims (the
  strict CSR's numerator over every claim);
- supported claim rate SCR: (fully supported + recovered) / all claims, where a
  recovered claim is a partially supported one whose missing support was found in
  the sections read and passed the verbatim check.

Rates over an empty denominator are NaN.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import TypedDict

from veriscribe.results import (
    COMPLIANT_TIERS,
    LENIENT_VERDICTS,
    TIERS,
    VERDICTS,
    Tier,
    Verdict,
)

__all__ = [
    "COMPLIANT_TIERS",
    "ClaimFunnel",
    "ClaimRecord",
    "Tier",
    "Verdict",
    "certified_claim_rate",
    "citation_coverage",
    "claim_funnel",
    "claim_support_rate",
    "supported_claim_rate",
    "verbatim_compliance_by_tier",
    "verbatim_compliance_rate",
]


@dataclass(frozen=True)
class ClaimRecord:
    """What the checks found for one claim sentence.

    The stages nest, and the constructor rejects records that break the nesting:
    a verbatim quote needs a covering citation, a verdict needs a verbatim quote
    (only those claims are judged), and only a partially supported claim can be
    recovered.
    """

    covered: bool
    """At least one citation marker credits this claim."""
    verbatim_ok: bool
    """At least one of those citations has a verbatim-compliant quote."""
    verdict: Verdict | None = None
    """The judge's verdict on the compliant quotes; None if not judged."""
    recovered: bool = False
    """A recovery quote for the unsupported part passed the verbatim check."""

    def __post_init__(self) -> None:
        if self.verdict is not None and self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}")
        if self.verbatim_ok and not self.covered:
            raise ValueError("a claim cannot have a verbatim quote without a citation")
        if self.verdict is not None and not self.verbatim_ok:
            raise ValueError("only claims with a verbatim-compliant quote are judged")
        if self.recovered and self.verdict != "partially_supported":
            raise ValueError("only a partially supported claim can be recovered")

    @property
    def lenient(self) -> bool:
        """Whether the compliant quotes support the claim at least partially."""
        return self.verdict in LENIENT_VERDICTS

    @property
    def strict(self) -> bool:
        """Whether the compliant quotes fully support the claim (it is certified)."""
        return self.verdict == "fully_supported"


@dataclass(frozen=True)
class ClaimFunnel:
    """Claim counts remaining after each check, in the paper's funnel order."""

    sentences: int
    """Sentences the answers were split into, before the claim filter."""
    claims: int
    """Sentences the claim filter kept: the denominator of every funnel rate."""
    covered: int
    """Claims credited by at least one citation."""
    verbatim: int
    """Covered claims with at least one verbatim-compliant quote."""
    lenient: int
    """Of those, claims judged fully or partially supported."""
    strict: int
    """Of those, claims judged fully supported: the certified claims."""
    recovered: int
    """Partially supported claims whose missing support was recovered."""

    def __add__(self, other: ClaimFunnel) -> ClaimFunnel:
        """Pool two funnels, e.g. of two answers."""
        return ClaimFunnel(
            **{k: v + getattr(other, k) for k, v in asdict(self).items()}
        )

    @property
    def ccr(self) -> float:
        """Certified claim rate: strict claims over all claims."""
        return _rate(self.strict, self.claims)

    @property
    def scr(self) -> float:
        """Supported claim rate: strict plus recovered claims over all claims."""
        return _rate(self.strict + self.recovered, self.claims)

    def stage_rates(self) -> dict[str, float]:
        """Return each stage from ``covered`` to ``strict`` as a share of claims."""
        return {
            stage: _rate(getattr(self, stage), self.claims)
            for stage in ("covered", "verbatim", "lenient", "strict")
        }

    def as_dict(self) -> dict[str, int]:
        """Return the counts as a plain dictionary for JSON output."""
        return asdict(self)


class ReportedRates(TypedDict):
    """The claim-level rates as answers and reports show them (paper section 3.2).

    Rounded to 4 places; None where the denominator is 0.
    """

    cc: float | None
    vcr: float | None
    csr_strict: float | None
    csr_lenient: float | None
    ccr: float | None
    scr: float | None


def reported_rates(
    funnel: ClaimFunnel, compliant: int, citations: int
) -> ReportedRates:
    """Return the rates of a funnel whose ``citations`` have ``compliant`` quotes."""

    def rate(numerator: int, denominator: int) -> float | None:
        return round(numerator / denominator, 4) if denominator else None

    return {
        "cc": rate(funnel.covered, funnel.claims),
        "vcr": rate(compliant, citations),
        "csr_strict": rate(funnel.strict, funnel.verbatim),
        "csr_lenient": rate(funnel.lenient, funnel.verbatim),
        "ccr": rate(funnel.strict, funnel.claims),
        "scr": rate(funnel.strict + funnel.recovered, funnel.claims),
    }


def citation_coverage(claims: Sequence[ClaimRecord]) -> float:
    """Compute citation coverage CC: the share of claims credited by a citation."""
    return _rate(sum(c.covered for c in claims), len(claims))


def verbatim_compliance_rate(tiers: Sequence[Tier]) -> float:
    """Compute VCR: the share of emitted citations whose quote passes a tier."""
    _check_tiers(tiers)
    return _rate(sum(t in COMPLIANT_TIERS for t in tiers), len(tiers))


def verbatim_compliance_by_tier(tiers: Sequence[Tier]) -> dict[str, float]:
    """Compute the share of emitted citations in each verbatim tier.

    Args:
        tiers: The tier of every citation the answers emitted.

    Returns:
        One share per tier (``exact``, ``normalized``, ``elided``, ``elided_risky``,
        ``fail``, ``unresolved``); the first three add up to the VCR.
    """
    _check_tiers(tiers)
    return {tier: _rate(sum(t == tier for t in tiers), len(tiers)) for tier in TIERS}


def claim_support_rate(
    claims: Sequence[ClaimRecord], *, lenient: bool = False
) -> float:
    """Compute CSR over cited claims: strict (fully) or lenient (at least partially).

    Args:
        claims: Every claim record; only those with a compliant quote are counted.
        lenient: Count partially supported claims as supported too.

    Returns:
        The share of cited claims supported; NaN when no claim is cited.
    """
    cited = [c for c in claims if c.verbatim_ok]
    supported = sum(c.lenient if lenient else c.strict for c in cited)
    return _rate(supported, len(cited))


def certified_claim_rate(claims: Sequence[ClaimRecord]) -> float:
    """Compute CCR: the share of all claims with a compliant, fully supporting quote."""
    return _rate(sum(c.strict for c in claims), len(claims))


def supported_claim_rate(claims: Sequence[ClaimRecord]) -> float:
    """Compute SCR: the share of all claims fully supported or recovered."""
    return _rate(sum(c.strict or c.recovered for c in claims), len(claims))


def claim_funnel(claims: Iterable[ClaimRecord], *, sentences: int) -> ClaimFunnel:
    """Count the claims that remain after each check.

    Args:
        claims: Every claim record.
        sentences: How many sentences the answers had before the claim filter.

    Returns:
        The funnel counts.

    Raises:
        ValueError: If there are more claims than sentences.
    """
    records = list(claims)
    if sentences < len(records):
        raise ValueError(
            f"{len(records)} claims cannot come from {sentences} sentences"
        )
    return ClaimFunnel(
        sentences=sentences,
        claims=len(records),
        covered=sum(c.covered for c in records),
        verbatim=sum(c.verbatim_ok for c in records),
        lenient=sum(c.lenient for c in records),
        strict=sum(c.strict for c in records),
        recovered=sum(c.recovered for c in records),
    )


def _rate(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else float("nan")


def _check_tiers(tiers: Sequence[str]) -> None:
    unknown = set(tiers) - set(TIERS)
    if unknown:
        raise ValueError(f"unknown verbatim tiers: {sorted(unknown)}")
