"""Linear-chain conditional random field: decoding, marginals and the training loss.

A sequence of ``T`` items with ``K`` labels scores a labelling ``y`` as

    start[y_0] + sum_t emissions[t, y_t] + sum_t transitions[y_(t-1), y_t] + end[y_(T-1)]

where the emissions are linear in the item's features. :func:`viterbi` finds the best
labelling, :func:`marginals` each item's label probabilities. :func:`negative_log_
likelihood` is the training loss for gold label *sets*: an item may accept several
labels (a BIORC800 sentence annotated OBJECTIVE and METHODS), so the loss is
``log Z - log Z_gold``, where ``Z_gold`` sums over the labellings that pick an accepted
label at every item. Everything is numpy; the optimiser lives in the training module.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "Transitions",
    "marginals",
    "negative_log_likelihood",
    "viterbi",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
# Stands for log 0 where -inf would turn into nan in (-inf) - (-inf).
_LOG_ZERO = -1e30


@dataclass(frozen=True)
class Transitions:
    """Label-to-label scores and the scores of starting and ending on a label."""

    matrix: FloatArray
    start: FloatArray
    end: FloatArray

    @classmethod
    def none(cls, labels: int) -> Transitions:
        """Return all-zero scores: each item then gets its best emission."""
        return cls(np.zeros((labels, labels)), np.zeros(labels), np.zeros(labels))


def viterbi(emissions: FloatArray, transitions: Transitions) -> list[int]:
    """Return the highest-scoring label indices of one sequence."""
    length = emissions.shape[0]
    if length == 0:
        return []
    score = transitions.start + emissions[0]
    back = np.zeros(emissions.shape, dtype=np.int64)
    for t in range(1, length):
        candidates = score[:, None] + transitions.matrix
        back[t] = candidates.argmax(axis=0)
        score = candidates.max(axis=0) + emissions[t]
    best = [int((score + transitions.end).argmax())]
    for t in range(length - 1, 0, -1):
        best.append(int(back[t, best[-1]]))
    return best[::-1]


def marginals(emissions: FloatArray, transitions: Transitions) -> FloatArray:
    """Return each item's label probabilities in one sequence (rows sum to one)."""
    if emissions.shape[0] == 0:
        return np.zeros(emissions.shape)
    mask = np.ones((1, emissions.shape[0]), dtype=bool)
    node: FloatArray = _ForwardBackward(emissions[None], transitions, mask).node[0]
    return node


class _ForwardBackward:
    """Forward-backward over a padded batch of sequences, in log space.

    ``emissions`` is ``(B, T, K)``; ``mask[b, t]`` tells whether step t of sequence b
    is real. Sequences start at step 0; padding only follows the real steps.
    """

    def __init__(
        self, emissions: FloatArray, transitions: Transitions, mask: BoolArray
    ) -> None:
        batch, steps, labels = emissions.shape
        exp_matrix = np.exp(transitions.matrix)
        alpha = np.empty((batch, steps, labels))
        beta = np.empty((batch, steps, labels))
        alpha[:, 0] = transitions.start + emissions[:, 0]
        for t in range(1, steps):
            previous = alpha[:, t - 1]
            top = previous.max(axis=1, keepdims=True)
            step = np.log(np.exp(previous - top) @ exp_matrix) + top + emissions[:, t]
            # A padded step carries the last real one, so alpha[:, -1] ends each row.
            alpha[:, t] = np.where(mask[:, t, None], step, previous)
        beta[:, steps - 1] = transitions.end
        for t in range(steps - 2, -1, -1):
            following = emissions[:, t + 1] + beta[:, t + 1]
            top = following.max(axis=1, keepdims=True)
            step = np.log(np.exp(following - top) @ exp_matrix.T) + top
            beta[:, t] = np.where(mask[:, t + 1, None], step, transitions.end)
        final = alpha[:, steps - 1] + transitions.end
        top_final = final.max(axis=1)
        self.log_z: FloatArray = (
            np.log(np.exp(final - top_final[:, None]).sum(axis=1)) + top_final
        )
        log_node = np.minimum(alpha + beta - self.log_z[:, None, None], 0.0)
        self.node: FloatArray = np.exp(log_node) * mask[:, :, None]
        self.pairs: FloatArray = np.zeros((labels, labels))
        if steps > 1:
            before = alpha[:, :-1]
            after = emissions[:, 1:] + beta[:, 1:]
            top_before = before.max(axis=2, keepdims=True)
            top_after = after.max(axis=2, keepdims=True)
            # The exponent is at most -min(transitions): no overflow for any
            # weights training produces; the cap keeps padded steps (masked to 0)
            # from ever giving inf * 0.
            exponent = top_before + top_after - self.log_z[:, None, None]
            scale = np.exp(np.minimum(exponent, 700.0))[..., 0] * mask[:, 1:]
            self.pairs = (
                np.einsum(
                    "btj,btk,bt->jk",
                    np.exp(before - top_before),
                    np.exp(after - top_after),
                    scale,
                )
                * exp_matrix
            )
        lengths = mask.sum(axis=1)
        self.first: FloatArray = self.node[:, 0]
        self.last: FloatArray = self.node[np.arange(batch), lengths - 1]


@dataclass(frozen=True)
class Loss:
    """The summed loss of a batch and its gradients."""

    value: float
    emissions: FloatArray
    transitions: Transitions


def negative_log_likelihood(
    emissions: FloatArray,
    transitions: Transitions,
    mask: BoolArray,
    accepted: BoolArray,
) -> Loss:
    """Return the batch's ``sum(log Z - log Z_gold)`` and its gradients.

    Args:
        emissions: ``(B, T, K)`` emission scores, padded.
        transitions: The current transition scores.
        mask: ``(B, T)``, true on real steps.
        accepted: ``(B, T, K)``, true for the gold labels of a real step (at least
            one per real step).

    Raises:
        ValueError: A real step without an accepted label.
    """
    accepted = accepted | ~mask[:, :, None]
    if not accepted.any(axis=2).all():
        raise ValueError("every item needs at least one accepted label")
    free = _ForwardBackward(emissions, transitions, mask)
    gold = _ForwardBackward(np.where(accepted, emissions, _LOG_ZERO), transitions, mask)
    return Loss(
        value=float((free.log_z - gold.log_z).sum()),
        emissions=free.node - gold.node,
        transitions=Transitions(
            matrix=free.pairs - gold.pairs,
            start=(free.first - gold.first).sum(axis=0),
            end=(free.last - gold.last).sum(axis=0),
        ),
    )
