"""The vocabularies of checked answers, defined once: quote tiers, verdicts, statuses.

Every layer reads these names from here (the checks that assign them, the metrics that
count them, the nodes, the evaluation, the terminal), so a tier or verdict cannot mean
one thing in one place and another elsewhere. This module imports nothing of
veriscribe.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

Tier = Literal["exact", "normalized", "elided", "elided_risky", "fail", "unresolved"]
"""How a quote matched its cited section (see :mod:`veriscribe.checks.verbatim`)."""

TIERS: Final[tuple[Tier, ...]] = get_args(Tier)

COMPLIANT_TIERS: Final[frozenset[Tier]] = frozenset({"exact", "normalized", "elided"})
"""The tiers that count as verbatim: ``elided_risky`` skipped a word that can turn the
meaning (a negation, a condition), ``fail`` matched nothing, ``unresolved`` names no
known section."""

Verdict = Literal[
    "fully_supported", "partially_supported", "not_supported", "contradicted"
]
"""The support judge's verdict on a claim given its quotes."""

VERDICTS: Final[tuple[Verdict, ...]] = get_args(Verdict)
"""From the most supportive to the least: a tie goes to the later one."""

LENIENT_VERDICTS: Final[frozenset[Verdict]] = frozenset(
    {"fully_supported", "partially_supported"}
)
"""The verdicts that count as supported when partial support is allowed."""

Shortfall = Literal[
    "unsupported_addition", "strength_inflation", "scope_inflation", "causal_upgrade"
]
"""What a partially supported claim adds to its quotes."""

ClaimStatus = Literal[
    "certified", "recovered", "partial", "unsupported", "uncited", "unjudged"
]
"""The badge a claim carries: only ``certified`` and ``recovered`` are shown as
supported by the quoted source."""

CLAIM_STATUSES: Final[tuple[ClaimStatus, ...]] = get_args(ClaimStatus)
