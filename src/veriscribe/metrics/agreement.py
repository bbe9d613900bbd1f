"""Agreement between two raters over categorical labels: Cohen's kappa.

For labels ``1..k``, ``O`` the observed joint proportions and ``E`` the proportions
expected by chance (the outer product of the two raters' marginals), kappa is
``1 - sum(W * O) / sum(W * E)`` with disagreement weights ``W``: 0 on the diagonal
and 1 elsewhere for plain kappa, which equals ``(p_o - p_e) / (1 - p_e)``;
``|i - j| / (k - 1)`` for linear and ``((i - j) / (k - 1)) ** 2`` for quadratic
weighting, where confusing the two ends of an ordered scale costs most (the
verifiable-by-construction paper reports both, over fully / partially / neither).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal, TypeVar

import numpy as np

__all__ = ["cohen_kappa", "observed_agreement"]

Label = TypeVar("Label", bound=Hashable)


def observed_agreement(
    rater_a: Sequence[Hashable], rater_b: Sequence[Hashable]
) -> float:
    """Compute the share of items on which two raters give the same label.

    Args:
        rater_a: The first rater's label per item.
        rater_b: The second rater's label for the same items, in the same order.

    Returns:
        The proportion of agreeing items.

    Raises:
        ValueError: If the sequences are empty or differ in length.
    """
    _check_pairs(rater_a, rater_b)
    return sum(a == b for a, b in zip(rater_a, rater_b, strict=True)) / len(rater_a)


def cohen_kappa(
    rater_a: Sequence[Label],
    rater_b: Sequence[Label],
    *,
    labels: Sequence[Label] | None = None,
    weights: Literal["linear", "quadratic"] | None = None,
) -> float:
    """Compute Cohen's kappa, plain or weighted, between two raters.

    Args:
        rater_a: The first rater's label per item.
        rater_b: The second rater's label for the same items, in the same order.
        labels: All categories, in scale order for weighted kappa; by default the
            labels seen, in order of first appearance (rater A, then rater B).
        weights: ``None`` for plain kappa, or ``"linear"`` / ``"quadratic"``
            disagreement weights over the order of ``labels``.

    Returns:
        Kappa in [-1, 1]; NaN when chance agreement is already perfect (both raters
        used one and the same category throughout), where kappa is undefined.

    Raises:
        ValueError: If the sequences are empty or differ in length, a label is not
            among ``labels``, or weighting is asked for without explicit ``labels``.
    """
    _check_pairs(rater_a, rater_b)
    if weights is not None and labels is None:
        raise ValueError("weighted kappa needs the ordered list of labels")
    categories = list(dict.fromkeys([*rater_a, *rater_b] if labels is None else labels))
    index = {label: i for i, label in enumerate(categories)}
    unknown = {label for label in [*rater_a, *rater_b] if label not in index}
    if unknown:
        raise ValueError(
            f"labels not among the given categories: {sorted(map(str, unknown))}"
        )

    k = len(categories)
    observed = np.zeros((k, k), dtype=np.float64)
    for a, b in zip(rater_a, rater_b, strict=True):
        observed[index[a], index[b]] += 1.0
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))

    steps = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(np.float64)
    if weights is None:
        disagreement = (steps > 0).astype(np.float64)
    else:
        scaled = steps / max(k - 1, 1)
        disagreement = scaled if weights == "linear" else scaled**2
    chance = float((disagreement * expected).sum())
    if chance == 0.0:
        return float("nan")
    return 1.0 - float((disagreement * observed).sum()) / chance


def _check_pairs(rater_a: Sequence[Hashable], rater_b: Sequence[Hashable]) -> None:
    if len(rater_a) != len(rater_b):
        raise ValueError(
            f"raters label different numbers of items: {len(rater_a)} and {len(rater_b)}"
        )
    if not rater_a:
        raise ValueError("no items to compare")
