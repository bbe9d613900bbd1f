"""The embedded backend's fast sampler writes what llama-cpp-python's own chain writes.

Each prompt runs twice on the same context, once through ``CandidateSampler`` (the
default) and once through the stock chain (grammar over the whole vocabulary); at
temperature 0 the texts are identical, token for token. The context is cleared before
each call: a prompt read again from a warm cache (only its last token re-read) gives
logits that differ in the last bits, whichever the sampler. Covered: a JSON-schema object,
a quote enum (the constrained citations' schema) and the copy guard.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from veriscribe.llm.embedded import copy_guard as guard_module
from veriscribe.llm.embedded.candidates import CandidateFilter
from veriscribe.llm.embedded.local import ChatLlamaCpp
from veriscribe.llm.embedded.sampling import CandidateSampler, SamplingLlama
from veriscribe.nodes.qa.constrained import SourceUnit, SourceUnits, quote_constraint
from veriscribe.text.sentences import quotable_units

pytestmark = pytest.mark.local_model

SECTION = (
    "Thiazide diuretics, calcium channel blockers, ACE inhibitors and angiotensin "
    "receptor blockers are first-line agents. ACE inhibitors should not be combined "
    "with angiotensin receptor blockers. Review the dose after four weeks."
)
PASSAGE = (
    "Blood pressure should be measured with a validated device after five minutes of "
    "rest, with the patient seated and the arm supported at heart level. Lifestyle "
    "measures, including less dietary sodium, more physical activity and moderation "
    "of alcohol, lower blood pressure in most patients."
)
OBJECT = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean"},
        "colours": {"type": "array", "items": {"type": "string"}},
        "note": {"type": "string"},
    },
    "required": ["ok", "colours", "note"],
}


def quote_schema() -> dict[str, Any]:
    units = tuple(
        SourceUnit(f"S{i}", "htn:drugs", u.text)
        for i, u in enumerate(quotable_units(SECTION), 1)
    )
    return quote_constraint(SourceUnits(units), 2)


CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "json_object": (
        'Return a JSON object {"ok": true, "colours": [three colour names], '
        '"note": "a sentence about colours"}.',
        {"response_format": {"type": "json_object", "schema": OBJECT}},
    ),
    "quote_enum": (
        f"Section [htn:drugs]:\n{SECTION}\n\nWhich drugs should not be combined? "
        'Answer as JSON {"sentences": [{"section_id": "htn:drugs", "quote": "...", '
        '"sentence": "..."}]}.',
        {"response_format": {"type": "json_object", "schema": quote_schema()}},
    ),
    "copy_guard": (
        f"Summarise this passage in two sentences:\n{PASSAGE}",
        {"copy_guard": {"source": PASSAGE, "limit": 3}},
    ),
}


@pytest.fixture(scope="module")
def chat(local_gguf: Path) -> ChatLlamaCpp:
    return ChatLlamaCpp(
        model_path=local_gguf, n_ctx=2048, temperature=0.0, max_tokens=90
    )


def write(chat: ChatLlamaCpp, case: str, *, stock: bool) -> str:
    prompt, options = CASES[case]
    chat._stock_sampling = stock
    chat._loaded().contexts[0].reset()
    try:
        result = chat.invoke([HumanMessage(prompt)], **options)
    finally:
        chat._stock_sampling = False
    return str(result.content)


@pytest.mark.parametrize("case", sorted(CASES))
def test_greedy_output_is_the_stock_chains(chat: ChatLlamaCpp, case: str) -> None:
    stock = write(chat, case, stock=True)
    fast = write(chat, case, stock=False)
    sampler = chat._loaded().contexts[0]._sampler
    assert isinstance(sampler, CandidateSampler) and sampler.steps > 10
    assert fast == stock


def test_sampling_at_a_temperature_draws_what_the_stock_chain_draws(
    chat: ChatLlamaCpp,
) -> None:
    """Same seed, same masked distribution: the same draw (top-k tokens all allowed)."""
    prompt, options = CASES["json_object"]
    texts = []
    for stock in (True, False):
        chat._stock_sampling = stock
        chat._loaded().contexts[0].reset()
        try:
            reply = chat.invoke(
                [HumanMessage(prompt)], temperature=0.8, seed=7, **options
            )
        finally:
            chat._stock_sampling = False
        texts.append(str(reply.content))
    assert texts[0] == texts[1]


def test_lookup_decoding_drafts_and_keeps_every_constraint(
    chat: ChatLlamaCpp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Drafted tokens pass the grammar and the quote enum; the copy guard sees each
    position's own context (one token longer at every step), never the drafts after it.
    """
    seen: list[int] = []
    real = guard_module.copy_guard_processor

    def recording(*args: Any, **kwargs: Any) -> CandidateFilter:
        guard = real(*args, **kwargs)

        def check(input_ids: Any, ids: Any, logits: Any) -> None:
            seen.append(len(input_ids))
            guard.check(input_ids, ids, logits)

        return CandidateFilter(check, guard.candidates)

    monkeypatch.setattr(guard_module, "copy_guard_processor", recording)
    llama: SamplingLlama = chat._loaded().contexts[0]
    before = llama.drafted_batches
    replies = {}
    chat.lookup = True
    try:
        for case in sorted(CASES):
            llama.reset()
            prompt, options = CASES[case]
            replies[case] = str(chat.invoke([HumanMessage(prompt)], **options).content)
    finally:
        chat.lookup = False
    assert llama.drafted_batches > before
    reply = json.loads(replies["json_object"])
    assert isinstance(reply["ok"], bool) and isinstance(reply["colours"], list)
    units = {u.text for u in quotable_units(SECTION)}
    quotes = [s["quote"] for s in json.loads(replies["quote_enum"])["sentences"]]
    assert quotes and set(quotes) <= units
    assert len(seen) > 10 and seen == list(range(seen[0], seen[0] + len(seen)))
