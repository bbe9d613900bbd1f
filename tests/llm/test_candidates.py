"""Candidate filters: the same check on the whole vocabulary or on the best tokens only."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from veriscribe.llm.embedded.candidates import CandidateFilter
from veriscribe.llm.embedded.copy_guard import CopyGuard, copy_guard_processor

SOURCE = "the input DNA ranged from 1 to 600 ng"


def forbid_even(
    input_ids: Any, ids: npt.NDArray[np.intc], logits: npt.NDArray[np.single]
) -> None:
    for at, token in enumerate(ids.tolist()):
        if token % 2 == 0:
            logits[at] = -np.inf


def test_on_the_whole_vocabulary_only_the_best_are_checked() -> None:
    scores = np.array([1.0, 9.0, 8.0, 7.0, 2.0, 6.0], dtype=np.float32)
    out = CandidateFilter(forbid_even, 3)([], scores)
    assert out.tolist() == [1.0, 9.0, -np.inf, 7.0, 2.0, 6.0]


def test_a_filter_of_no_candidates_runs_once_per_token_on_nothing() -> None:
    seen: list[int] = []

    def hook(input_ids: Any, ids: Any, logits: Any) -> None:
        seen.append(len(ids) + len(logits))

    scores = np.zeros(5, dtype=np.float32)
    assert CandidateFilter(hook, 0)([], scores) is scores
    assert seen == [0]


def test_the_copy_guard_writes_through_a_view_of_the_candidates() -> None:
    """The sampler hands strided views of its token array; forbidding writes into it."""
    vocab = {
        0: " from",
        1: " widely",
        10: "the",
        11: " input",
        12: " DNA",
        13: " ranged",
    }
    # A function word that would carry a copied run past the limit is refused.
    guard = copy_guard_processor(CopyGuard(SOURCE, 2), vocab.__getitem__)
    rows = np.zeros(
        2, dtype=np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)])
    )
    rows["id"] = [0, 1]
    rows["logit"] = [5.0, 4.0]
    prompt = [7, 7, 7]
    guard.check(prompt, rows["id"], rows["logit"])
    guard.check([*prompt, 10, 11, 12, 13], rows["id"], rows["logit"])
    assert rows["logit"].tolist() == [-np.inf, 4.0]


def test_greedy_ties_go_to_the_lowest_token_id() -> None:
    from veriscribe.llm.embedded.sampling import _ROW, _best

    rows = np.zeros(4, dtype=_ROW)
    rows["id"] = [9, 4, 7, 2]
    rows["logit"] = [3.0, 5.0, 5.0, -np.inf]
    assert _best(rows) == 1
    rows["logit"] = -np.inf
    assert _best(rows) is None


def survivors_judge() -> Any:
    from veriscribe.llm.embedded.sampling import CandidateSampler

    judge = CandidateSampler.__new__(CandidateSampler)
    judge._typical_p, judge._min_p, judge._top_p, judge._top_k = 1.0, 0.05, 0.95, 40
    return judge


def test_a_cut_with_one_allowed_token_decides_when_min_p_drops_the_rest() -> None:
    judge = survivors_judge()
    logits = np.array([10.0, -np.inf, -np.inf], dtype=np.float32)
    assert judge._same_survivors(logits, 2.0)
    # A token outside the cut could score 8.0, above min-p's threshold (about 7.0).
    assert not judge._same_survivors(logits, 8.0)


def test_a_cut_whose_top_p_boundary_the_outside_could_move_does_not_decide() -> None:
    judge = survivors_judge()
    # Alone, 10.0 holds 95% of the cut's mass and top-p keeps it only; outside
    # tokens up to 6.9 could lower its share so that 7.05 (which passes min-p) stays.
    logits = np.array([10.0, 7.05, -np.inf], dtype=np.float32)
    assert not judge._same_survivors(logits, 6.9)
    assert judge._same_survivors(logits, -10.0)
