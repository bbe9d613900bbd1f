"""The simulated model answers a prompt by its id and values, never by its wording."""

from __future__ import annotations

import dataclasses
import json
import string
from typing import Any

import pytest
from langchain_ollama import ChatOllama
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from fake_server import FakeServer
from veriscribe.llm.embedded.local import to_chat_messages
from veriscribe.llm.factory import make_llm
from veriscribe.llm.sim import sim_reply
from veriscribe.llm.sim_replies import WRITERS, UnknownPrompt
from veriscribe.llm.structured import json_schema
from veriscribe.nodes.abstract.summarize_facet import facet_values
from veriscribe.nodes.qa.answer import AnswerReply
from veriscribe.nodes.qa.retrieve import Selection
from veriscribe.options import AbstractOptions
from veriscribe.prompts import PROMPT_KEY, Prompt, all_prompts, load_prompt
from veriscribe.settings import Settings
from veriscribe.text.replies import SummaryFull

TEXT = (
    "We enrolled 40 adults with asthma in a trial [3]. Our aim was to test inhaled "
    "steroids. Exacerbations fell by 30% in the treated group. Adverse events were "
    "rare in both of the groups. The effect lasted for a whole year. Adherence to "
    "the inhaler was high in most patients. Lung function improved in the treated "
    "group."
)
SOURCES = (
    "=== SOURCE a1b2c3d4 ===\n[asthma:dose]\nStart inhaled steroids at the lowest "
    "effective dose in adults. Review the dose every three months in clinic.\n"
    "=== END a1b2c3d4 ===\n\n=== SOURCE e5f6a7b8 ===\n[asthma:review]\nPatients "
    "with frequent symptoms should be reviewed by a specialist within four weeks.\n"
    "=== END e5f6a7b8 ==="
)
CANDIDATES = (
    "[asthma:dose]\nCovers inhaled steroid dose in adults with asthma.\n"
    "[asthma:review]\nCovers specialist review of frequent symptoms.\n"
    "[copd:oxygen]\nCovers oxygen therapy in chronic obstructive disease."
)
SECTIONS = (
    "Section 1 (Steroid dose):\nStart inhaled steroids at the lowest effective dose "
    "in adults with asthma.\n\nSection 2 (Review):\nPatients with frequent symptoms "
    "should be reviewed by a specialist within four weeks."
)


def reworded(prompt: Prompt) -> Prompt:
    """Return the prompt as an edit of its file would load: new wording, same slots."""

    def edit(template: str) -> str:
        parts = ["Read this first.\n"]
        for literal, name, _, _ in string.Formatter().parse(template):
            # Every marker changes ("Text:" becomes "TEXT:"), the slots stay.
            parts.append(literal.upper().replace("{", "{{").replace("}", "}}"))
            if name is not None:
                parts.append(f"{{{name}}}")
        return "".join(parts)

    graph_name = prompt.id.split("@")[0]
    return dataclasses.replace(
        prompt,
        id=f"{graph_name}@0edited0",
        system=edit(prompt.system),
        user=edit(prompt.user),
    )


def summary_values(prompt: Prompt) -> dict[str, str]:
    return facet_values(AbstractOptions(), prompt, "results", TEXT, {"entities": ""})


CASES: list[tuple[str, str, Any, type[BaseModel] | None]] = [
    ("abstract", "summarize_bc", summary_values, SummaryFull),
    (
        "qa",
        "answer_quote",
        {
            "context": "",
            "question": "Which dose of inhaled steroids should adults start on?",
            "sources": SOURCES,
            "example_id": "asthma:dose",
        },
        AnswerReply,
    ),
    (
        "qa",
        "retrieve",
        {
            "context": "",
            "question": "Which steroid dose should adults with asthma start on?",
            "candidates": CANDIDATES,
            "k": "2",
        },
        Selection,
    ),
    ("qa", "summarize_sections", {"sections": SECTIONS, "count": "2"}, None),
    (
        "questions",
        "lookup",
        {"section_title": "Steroid dose", "text": TEXT, "feedback": ""},
        None,
    ),
]


async def reply(prompt: Prompt, values: dict[str, str], schema: Any) -> str:
    llm = make_llm("sim:seed=3", Settings())
    messages = prompt.render(**values)
    if schema is None:
        return (await llm.text(prompt.id, messages)).value
    return (await llm.json(prompt.id, messages, schema)).raw


@pytest.mark.parametrize(
    ("graph", "name", "values", "schema"),
    CASES,
    ids=[f"{graph}/{name}" for graph, name, _, _ in CASES],
)
async def test_a_reworded_prompt_gets_the_same_reply(
    graph: str, name: str, values: Any, schema: type[BaseModel] | None
) -> None:
    prompt = load_prompt(graph, name)
    edited = reworded(prompt)
    given = values(prompt) if callable(values) else values
    assert edited.user != prompt.user and edited.system != prompt.system
    assert edited.render(**given) != prompt.render(**given)  # the model sees new text
    before = await reply(prompt, given, schema)
    # A reply of the prompt's own writer, not the generic one made of its words.
    assert before and "READ THIS FIRST" not in before.upper()
    assert "summarise" not in before.lower() and "section text" not in before.lower()
    assert await reply(edited, given, schema) == before


async def test_a_prompt_without_a_writer_is_a_clear_error() -> None:
    prompt = dataclasses.replace(load_prompt("qa", "claims"), id="qa/new_step@1234abcd")
    llm = make_llm("sim", Settings())
    messages = prompt.render(sentences="1. Take it daily.", count="1")
    with pytest.raises(
        UnknownPrompt, match="no reply written for the prompt 'qa/new_step'"
    ):
        await llm.text(prompt.id, messages)


def test_every_prompt_file_has_a_writer() -> None:
    names = {prompt.name for prompt in all_prompts()}
    assert len(names) > 20
    assert names == set(WRITERS)


@pytest.mark.parametrize(
    ("graph", "name", "values", "schema"),
    CASES,
    ids=[f"{graph}/{name}" for graph, name, _, _ in CASES],
)
def test_servers_are_sent_no_prompt_id_and_the_fake_one_answers_as_the_sim(
    graph: str, name: str, values: Any, schema: type[BaseModel] | None
) -> None:
    prompt = load_prompt(graph, name)
    messages = prompt.render(**(values(prompt) if callable(values) else values))
    assert all(PROMPT_KEY in m.additional_kwargs for m in messages)
    shape = None if schema is None else json_schema(schema)
    kwargs = {}
    if shape is not None:
        form = {"name": "reply", "schema": shape}
        kwargs = {"response_format": {"type": "json_schema", "json_schema": form}}
    openai_body = ChatOpenAI(model="m", api_key="none")._get_request_payload(
        messages, **kwargs
    )
    ollama_messages = ChatOllama(model="m")._convert_messages_to_ollama_messages(
        messages
    )
    for sent in (openai_body, ollama_messages, to_chat_messages(messages)):
        text = json.dumps(sent)
        assert PROMPT_KEY not in text and prompt.id not in text
    # Over HTTP the fake server reads the prompt off the wording, and says what the
    # simulated model says in the process.
    served = FakeServer(seed=3).reply(openai_body)["choices"][0]["message"]["content"]
    assert served == sim_reply(messages, shape, seed=3)
