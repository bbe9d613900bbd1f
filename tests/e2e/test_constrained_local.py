"""Constrained citations take effect on the embedded model: proven, not assumed.

The prompt asks the model to quote a sentence that is not in the section. Without the
constraint it writes that sentence as its quote; with the constraint it cannot: every
quote is a sentence of the cited section.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from veriscribe.checks.verbatim import check_quote, is_compliant
from veriscribe.llm.client import LLM
from veriscribe.llm.factory import make_llm
from veriscribe.nodes.qa.answer import AnswerReply
from veriscribe.nodes.qa.constrained import SourceUnit, SourceUnits, quote_constraint
from veriscribe.settings import LLMSettings, Settings
from veriscribe.text.sentences import quotable_units

pytestmark = pytest.mark.local_model

KEY = "htn:drugs"
SECTION = (
    "Thiazide diuretics, calcium channel blockers, ACE inhibitors and angiotensin "
    "receptor blockers are first-line agents. ACE inhibitors should not be combined "
    "with angiotensin receptor blockers. Review the dose after four weeks."
)
OUTSIDE = "ACE inhibitors work best when combined with angiotensin receptor blockers."
PROMPT = (
    f"Section [{KEY}]:\n{SECTION}\n\n"
    "Write one sentence saying that ACE inhibitors work best combined with ARBs, and "
    f'give as its quote exactly this text: "{OUTSIDE}"\n'
    f'Answer as JSON {{"sentences": [{{"section_id": "{KEY}", "quote": "...", '
    '"sentence": "..."}]}.'
)


def units() -> SourceUnits:
    return SourceUnits(
        tuple(
            SourceUnit(f"S{i}", KEY, u.text)
            for i, u in enumerate(quotable_units(SECTION), 1)
        )
    )


def quotes_of(reply: AnswerReply) -> list[str]:
    return [item.quote for item in reply.sentences]


async def ask(llm: LLM, constrained: bool) -> list[str]:
    reply = await llm.json(
        "test.constrained" if constrained else "test.free",
        PROMPT,
        AnswerReply,
        max_tokens=160,
        constraint=quote_constraint(units(), 2) if constrained else None,
    )
    return quotes_of(reply.value)


def settings(**more: object) -> Settings:
    llm = LLMSettings(
        context_tokens=2048,
        max_output_tokens=160,
        cache=False,
        min_output_tokens_per_s=0.5,
    )
    return Settings(llm=llm, **more)  # type: ignore[arg-type]


async def test_the_embedded_model_cannot_quote_outside_the_section() -> None:
    llm = make_llm("local", settings())
    free = await ask(llm, constrained=False)
    assert free and any(not is_compliant(check_quote(q, SECTION).tier) for q in free)
    constrained = await ask(llm, constrained=True)
    allowed = {u.text for u in quotable_units(SECTION)}
    assert constrained and set(constrained) <= allowed
    assert all(check_quote(q, SECTION).tier == "exact" for q in constrained)


async def test_a_schema_that_cannot_become_a_grammar_is_an_error(
    local_gguf: Path,
) -> None:
    from veriscribe.errors import ConstraintError
    from veriscribe.llm.embedded.local import ChatLlamaCpp

    chat = ChatLlamaCpp(model_path=local_gguf, n_ctx=512)
    with pytest.raises(ConstraintError, match="cannot constrain"):
        chat.grammar({"type": "object", "properties": {"x": {"$ref": "#/nowhere"}}})


async def test_choice_probabilities_are_read_from_the_model() -> None:
    """One call, one token: the probabilities agree with what the model would say."""
    llm = make_llm("local", settings())
    prompt = "Is Paris the capital of France? Answer yes or no."
    probs = await llm.choice_probs("test.yes", prompt, ("yes", "no"))
    assert abs(sum(probs.value.values()) - 1) < 1e-6
    assert probs.usage.calls == 1 and probs.usage.output_tokens == 1
    said = await llm.text("test.say", prompt, max_tokens=3)
    says_yes = said.value.strip().lower().startswith("yes")
    assert says_yes == (probs.value["yes"] > 0.5), (said.value, probs.value)
