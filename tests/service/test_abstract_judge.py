"""Which faithfulness judge `eval abstracts --support` uses, and what it says of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakes import scripted_llm
from veriscribe.eval.abstract_judge import (
    MEASURED,
    MODEL_05B,
    MODEL_15B,
    MeasuredJudge,
    choose_judge,
    rule,
)
from veriscribe.eval.abstracts import eval_abstracts
from veriscribe.eval.support import SupportChecker
from veriscribe.service.common import open_store
from veriscribe.settings import Settings

JUDGES = (
    MeasuredJudge("checks", None, None, 0.90, 80),
    MeasuredJudge("hybrid", MODEL_05B, "local", 0.86, 80),
    MeasuredJudge("hybrid", MODEL_15B, "local:1.5b", 0.93, 80),
    MeasuredJudge("hybrid", "openai:big", "openai:big", None),
)

BODY = (
    "Traps caught 3,412 female Aedes aegypti over twelve weeks in 120 households. "
    "Expression of IL-6 increased in infected volunteers after the bite."
)


def test_the_best_measured_judge_whose_model_is_installed_is_chosen() -> None:
    assert choose_judge({MODEL_05B, MODEL_15B}, JUDGES).model == MODEL_15B
    # Without the 1.5B, the checks alone beat the 0.5B hybrid.
    assert choose_judge({MODEL_05B}, JUDGES).name == "checks"
    # A judge never measured is never chosen; the checks need nothing installed.
    assert choose_judge(set(), JUDGES[3:]).name == "checks"


def test_every_shipped_measurement_is_of_a_known_judge() -> None:
    assert any(j.method == "checks" and j.accuracy for j in MEASURED)
    for judge in MEASURED:
        assert judge.accuracy is None or 0 <= judge.accuracy <= 1
        assert (judge.model is None) == (judge.method == "checks")
    # What --support uses when nothing else is installed is accurate enough to use.
    assert (choose_judge(set()).accuracy or 0) >= 0.85


async def test_the_hybrid_asks_the_model_only_what_the_checks_pass() -> None:
    calls: list[str] = []

    def yes(prompt: str, _: dict[str, Any]) -> str:
        calls.append(prompt)
        return json.dumps({"answer": "yes"})

    judge = MeasuredJudge("hybrid", "fake", "fake", 0.9, cut=0.5)
    async with open_store(Settings()) as store:
        llm = scripted_llm(yes, store=store)
        wrong = await rule(llm, judge, "Traps caught 9,999 mosquitoes.", [BODY])
        right = await rule(
            llm, judge, "IL-6 expression increased in infected volunteers.", [BODY]
        )
    assert wrong["verdict"] == "contradicted" and wrong["method"] == "checks:number"
    assert right["verdict"] == "fully_supported" and right["method"] == "model"
    assert len(calls) == 3  # three yes/no samples, for the sentence the checks pass


async def test_support_report_names_the_judge_and_its_accuracy(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    abstract = (
        "Traps in 120 households caught 3,412 female Aedes aegypti. "
        "Traps in 120 households caught 5,000 female Aedes aegypti."
    )
    results.write_text(
        json.dumps(
            {"id": "d", "abstract": abstract, "reference": "x.", "source": "d.txt"}
        )
    )
    (tmp_path / "d.txt").write_text(BODY)
    judge = MeasuredJudge("checks", None, None, 0.91, 84)
    async with open_store(Settings()) as store:
        checker = SupportChecker(None, store, judge=judge)
        report = (
            await eval_abstracts(results, support=checker, resamples=100)
        ).model_dump(mode="json")
    assert report["metrics"]["claim_support"]["mean"] == pytest.approx(0.5)
    assert report["support"]["judge"] == "checks"
    assert report["support"]["judge_accuracy"] == 0.91
    assert report["support"]["judge_accuracy_pairs"] == 84
    assert report["per_article"][0]["support_verdicts"] == {
        "fully_supported": 1,
        "contradicted": 1,
    }
