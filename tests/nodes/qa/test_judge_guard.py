"""Every judge certifies through the certification guard, the sampled one included."""

from __future__ import annotations

import json

import pytest

from fakes import scripted_llm
from veriscribe.nodes.qa.judge import decide
from veriscribe.options import QAOptions

SOURCE = "Offer naloxone to patients on opioid doses above 50 MME per day."


def fully_supported(prompt: str, kwargs: dict[str, object]) -> str:
    return json.dumps({"verdict": "fully_supported", "reasoning": "persuaded"})


@pytest.mark.parametrize(
    "claim",
    [
        "Offer naloxone to patients on opioid doses above 90 MME per day.",
        "Do not offer naloxone to patients on opioid doses above 50 MME per day.",
    ],
)
async def test_a_persuaded_sampled_judge_cannot_certify_what_the_source_lacks(
    claim: str,
) -> None:
    llm = scripted_llm(fully_supported)
    options = QAOptions(judge_method="sampled", samples=3)
    ruling = await decide(llm, options, "When is naloxone offered?", claim, [SOURCE])
    assert ruling["votes"] == ["fully_supported"] * 3
    assert ruling["verdict"] == "not_supported"
    assert ruling["note"].startswith("not certified:")


async def test_the_sampled_judge_still_certifies_what_the_source_says() -> None:
    llm = scripted_llm(fully_supported)
    options = QAOptions(judge_method="sampled", samples=3)
    ruling = await decide(llm, options, "", SOURCE, [SOURCE])
    assert ruling["verdict"] == "fully_supported"
