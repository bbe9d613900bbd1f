"""Logits processors that look only at the best-scoring tokens of each step.

A logits processor in llama-cpp-python gets the scores of the whole vocabulary (about
151k tokens) at every step. One that only ever changes a few of the best tokens (the
copy guard) or none (the thread governor) says so by being a ``CandidateFilter``: the
embedded backend's sampler then hands it just those tokens, best first, and never
builds a vocabulary-sized array for it. Called as a plain processor it still works on
the whole vocabulary, for llama-cpp-python's own sampler chain.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["CandidateCheck", "CandidateFilter"]

CandidateCheck = Callable[[Any, npt.NDArray[np.intc], npt.NDArray[np.single]], None]
"""``check(input_ids, ids, logits)``: change ``logits`` (of the tokens ``ids``) in place.

``input_ids`` are the token ids so far, prompt and output (a sequence of ints)."""


@dataclass(frozen=True)
class CandidateFilter:
    """A logits processor that reads and changes only the best ``candidates`` tokens.

    ``check`` gets the ids so far (prompt and output), then the candidates' token ids
    and their logits; it may lower logits in place (to ``-inf`` to forbid a token),
    never raise one. With ``candidates`` 0 it gets empty arrays (a per-token hook).
    """

    check: CandidateCheck
    candidates: int

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """Apply the filter to the scores of the whole vocabulary."""
        k = min(self.candidates, len(scores))
        if k <= 0:
            empty = np.empty(0, dtype=np.intc)
            self.check(input_ids, empty, np.empty(0, dtype=np.single))
            return scores
        best = np.argpartition(scores, -k)[-k:].astype(np.intc)
        logits = np.asarray(scores[best], dtype=np.single)
        self.check(input_ids, best, logits)
        scores[best] = logits
        return scores
