"""llama.cpp parses the answer grammar of every quotable unit of the development guidelines.

A unit holding a double quote once made a grammar llama.cpp could not parse, and the null
sampler that followed crashed the process. Here every unit of every development guideline
(NGC, VA/DoD, cpgQA) goes into an answer grammar in groups of three sections, as the
answer node builds it, and llama.cpp must accept each one.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from veriscribe.documents.guidelines import read_guideline_path, section_key
from veriscribe.errors import ConstraintError, StructuredOutputError
from veriscribe.llm.client import LLM
from veriscribe.llm.embedded.grammar import check_grammar
from veriscribe.llm.embedded.local import ChatLlamaCpp
from veriscribe.llm.factory import make_llm
from veriscribe.nodes.qa.answer import AnswerReply
from veriscribe.nodes.qa.constrained import SourceUnit, SourceUnits, quote_constraint
from veriscribe.settings import LLMSettings, Settings
from veriscribe.text.sentences import quotable_units

pytestmark = pytest.mark.local_model


def section_groups(guidelines: Path) -> list[list[tuple[str, str]]]:
    """Return (key, text) of every section with text, three sections a group."""
    keyed: list[tuple[str, str]] = []
    for folder in ("ngc", "vadod", "cpgqa"):
        for doc in read_guideline_path(guidelines / folder):
            for section in doc.sections:
                if section.text.strip():
                    keyed.append(
                        (section_key(doc.doc_id, section.section_id), section.text)
                    )
    return [keyed[i : i + 3] for i in range(0, len(keyed), 3)]


def units_of(group: list[tuple[str, str]]) -> SourceUnits:
    units = [
        SourceUnit(f"S{n}", key, unit.text)
        for key, text in group
        for n, unit in enumerate(quotable_units(text), 1)
    ]
    return SourceUnits(tuple(units))


def test_every_development_unit_makes_a_grammar_llama_cpp_parses(
    local_gguf: Path, shared_data: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    chat = ChatLlamaCpp(model_path=local_gguf, n_ctx=512)
    groups = section_groups(shared_data / "guidelines")
    unit_count = hard = 0
    failures: list[str] = []
    for group in groups:
        units = units_of(group)
        if not units.units:
            continue
        unit_count += len(units.units)
        hard += sum(('"' in u.text or "\\" in u.text) for u in units.units)
        try:
            chat.grammar(quote_constraint(units, 4))
        except ConstraintError as exc:
            failures.append(f"{[key for key, _ in group]}: {exc}")
    print(
        f"{unit_count} units in {len(groups)} groups, {hard} with quotes or backslashes"
    )
    assert unit_count > 10_000 and hard > 100
    assert failures == []
    assert "parse" not in capfd.readouterr().err


def test_a_grammar_llama_cpp_rejects_is_an_error_and_prints_nothing(
    local_gguf: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    chat = ChatLlamaCpp(model_path=local_gguf, n_ctx=512)
    vocab = chat._loaded().contexts[0]._model.vocab
    with pytest.raises(ConstraintError, match="could not parse"):
        check_grammar(vocab, 'root ::= "unterminated')
    assert capfd.readouterr().err == ""


SECTION = (
    'The definitions of these grades can be found at the end of the "Major '
    'Recommendations" field. Store the file under C:\\guidelines\\grades and cite '
    'it as "Grade A\\B". Offer naloxone to every patient on opioids.'
)


async def test_the_model_quotes_sentences_that_hold_quotes_and_backslashes() -> None:
    settings = Settings(
        llm=LLMSettings(context_tokens=2048, max_output_tokens=200, cache=False)
    )
    llm: LLM = make_llm("local", settings)
    key = "d:grades"
    units = SourceUnits(
        tuple(
            SourceUnit(f"S{i}", key, u.text)
            for i, u in enumerate(quotable_units(SECTION), 1)
        )
    )
    prompt = (
        f"Section [{key}]:\n{SECTION}\n\nWhere can the definitions of the grades be "
        'found? Answer as JSON {"sentences": [{"section_id": ..., "quote": ..., '
        '"sentence": ...}]}, quoting the section word for word.'
    )
    try:
        reply = await llm.json(
            "test.quotes",
            prompt,
            AnswerReply,
            max_tokens=200,
            constraint=quote_constraint(units, 2),
        )
    except StructuredOutputError as exc:  # pragma: no cover - reported, not hidden
        pytest.fail(f"the constrained reply did not parse: {exc}")
    quotes = [item.quote for item in reply.value.sentences]
    assert quotes and set(quotes) <= {u.text for u in units.units}


def test_loading_the_model_logs_no_warning(
    local_gguf: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # llama.cpp's info lines (the loader's metadata dump) are not warnings: the error
    # log is for what went wrong.
    caplog.set_level(logging.DEBUG, logger="veriscribe.llama")
    ChatLlamaCpp(model_path=local_gguf, n_ctx=320).load()
    assert any(r.name == "veriscribe.llama" for r in caplog.records)
    info = [r for r in caplog.records if "- kv" in r.getMessage()]
    assert info and all(r.levelno == logging.INFO for r in info)
    loud = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    # What llama.cpp does warn of (a token type this model file gets wrong) stays.
    assert len(loud) <= 2
