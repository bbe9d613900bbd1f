"""Each vocabulary is defined once; every list that names its values follows it."""

from __future__ import annotations

from typing import get_args

from veriscribe.cli.evaluate import (
    JudgeName,
    LabellerName,
    RetrieverName,
    SupportJudgeName,
)
from veriscribe.cli.render import answers
from veriscribe.eval.abstract_judge import AbstractJudgeMethod
from veriscribe.options import JudgeMethod, LabellerKind, Retriever
from veriscribe.results import CLAIM_STATUSES, Shortfall, ShortfallVote


def test_every_claim_status_has_a_badge() -> None:
    assert set(answers._STATUS_STYLE) == set(CLAIM_STATUSES)


def test_the_eval_choices_are_the_options_choices() -> None:
    # The judges of abstract sentences are the QA judges and two more.
    assert {e.value for e in JudgeName} == set(get_args(AbstractJudgeMethod))
    assert set(get_args(JudgeMethod)) <= set(get_args(AbstractJudgeMethod))
    assert {e.value for e in SupportJudgeName} == {"auto"} | {
        e.value for e in JudgeName
    }
    assert {e.value for e in RetrieverName} == set(get_args(Retriever))
    # ``auto`` picks one of the two; scoring it would score one of them again.
    assert {e.value for e in LabellerName} == set(get_args(LabellerKind)) - {"auto"}


def test_a_judge_names_a_shortfall_or_none() -> None:
    assert get_args(ShortfallVote) == ("none", *get_args(Shortfall))
