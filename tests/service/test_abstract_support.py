"""Claim support of abstracts: evidence choice, judge majority and the eval report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakes import scripted_llm
from veriscribe.eval.abstracts import eval_abstracts
from veriscribe.eval.support import SupportChecker
from veriscribe.service.common import open_store
from veriscribe.settings import Settings

BODY = (
    "Dengue is transmitted by Aedes aegypti mosquitoes in tropical cities.\n\n"
    "We trapped adult mosquitoes in 120 households during the rainy season. "
    "Traps caught 3,412 female Aedes aegypti over twelve weeks.\n\n"
    "Household water storage containers held most of the larvae found."
)
ABSTRACT = (
    "Dengue is spread by Aedes aegypti mosquitoes in tropical cities. "
    "Traps in 120 households caught 3,412 female Aedes aegypti. "
    "Vaccination halved dengue incidence in every district studied."
)


class JudgeByClaim:
    """Answer the yes/no judge as a careful reader would; count samples per claim.

    The 'Dengue' sentence is said "yes" once in three samples (a probability of 1/3:
    partial support); 'Traps' is stated by the best-ranked article sentence; nothing
    in the article states 'Vaccination'.
    """

    def __init__(self) -> None:
        self.samples: dict[str, int] = {}

    def __call__(self, prompt: str, _: dict[str, Any]) -> str:
        claim = prompt.split("Claim: ", 1)[1].split("\n", 1)[0]
        passage = prompt.split("Guideline passage:\n", 1)[1].split("\nClaim: ", 1)[0]
        sample = self.samples[claim] = self.samples.get(claim, 0) + 1
        if f'"{claim}"' in passage:  # a sentence quoted word for word supports itself
            yes = True
        elif claim.startswith("Traps"):
            assert (
                "3,412 female" in passage
            )  # the best-ranked article sentence is shown
            yes = True
        elif claim.startswith("Dengue"):
            yes = sample == 1
        else:
            yes = False
        return json.dumps({"answer": "yes" if yes else "no"})


def judge_by_claim(prompt: str, kwargs: dict[str, Any]) -> str:
    """Answer with a fresh judge (sample counts start at zero)."""
    return JudgeByClaim()(prompt, kwargs)


async def test_each_sentence_is_judged_against_ranked_article_sentences() -> None:
    calls: list[str] = []
    judge = JudgeByClaim()

    def responder(prompt: str, kwargs: dict[str, Any]) -> str:
        calls.append(prompt)
        return judge(prompt, kwargs)

    async with open_store(Settings()) as store:
        checker = SupportChecker(scripted_llm(responder, store=store), store)
        result = await checker.check(ABSTRACT, BODY)
    assert result.verdicts == [
        "partially_supported",
        "fully_supported",
        "not_supported",
    ]
    assert result.scores() == {
        "claim_support": pytest.approx(1 / 3),
        "claim_support_lenient": pytest.approx(2 / 3),
    }
    # Three yes/no samples each; the vaccination sentence shares terms ("dengue")
    # with the article, so it is judged too.
    assert len(calls) == 9
    assert all('Guideline passage:\n[1] "' in c for c in calls)


async def test_a_sentence_without_any_shared_term_costs_no_call() -> None:
    calls: list[str] = []

    def responder(prompt: str, kwargs: dict[str, Any]) -> str:
        calls.append(prompt)
        return judge_by_claim(prompt, kwargs)

    async with open_store(Settings()) as store:
        checker = SupportChecker(scripted_llm(responder, store=store), store, samples=1)
        result = await checker.check(
            "Quantum chromodynamics explains gluon fields.", BODY
        )
    assert result.verdicts == ["not_supported"] and calls == []


async def test_eval_abstracts_adds_support_metrics(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text(
        json.dumps(
            {
                "id": "dengue",
                "abstract": ABSTRACT,
                "reference": "Aedes aegypti carries dengue; household traps measured it.",
                "source": "dengue.txt",
            }
        )
        + "\n"
    )
    (tmp_path / "dengue.txt").write_text(BODY)
    async with open_store(Settings()) as store:
        checker = SupportChecker(scripted_llm(JudgeByClaim(), store=store), store)
        report = (
            await eval_abstracts(results, support=checker, resamples=100)
        ).model_dump(mode="json")
    assert report["scored"] == 1, report["excluded"]
    assert report["metrics"]["claim_support"]["mean"] == pytest.approx(1 / 3)
    assert report["metrics"]["claim_support_lenient"]["better"] == "higher"
    assert report["per_article"][0]["support_verdicts"] == {
        "partially_supported": 1,
        "fully_supported": 1,
        "not_supported": 1,
    }
    assert report["support"]["samples"] == 3
    # The judge check: an article sentence judged against its own article.
    assert report["support"]["calibration"]["share"] == 1.0
    assert not [n for n in report["notes"] if "not meaningful" in n]


async def test_a_judge_that_fails_its_own_check_is_flagged(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text(
        json.dumps(
            {"id": "d", "abstract": ABSTRACT, "reference": "x y z.", "source": "d.txt"}
        )
    )
    (tmp_path / "d.txt").write_text(BODY)

    def contrary(prompt: str, _: dict[str, Any]) -> str:
        return '{"answer": "no"}'

    async with open_store(Settings()) as store:
        checker = SupportChecker(scripted_llm(contrary, store=store), store, samples=1)
        report = (
            await eval_abstracts(results, support=checker, resamples=100)
        ).model_dump(mode="json")
    assert report["support"]["calibration"] == {
        "sentences": 1,
        "fully_supported": 0,
        "share": 0.0,
        "verdicts": {"not_supported": 1},
    }
    assert any("claim_support is not meaningful" in n for n in report["notes"])
