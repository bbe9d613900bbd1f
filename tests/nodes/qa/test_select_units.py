"""The semantic choice only chooses among the sentences the checker certifies."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from veriscribe.checks.support import self_certifies
from veriscribe.nodes.qa.answer import certified_echoes, select_units
from veriscribe.retrieval.units import (
    SectionText,
    Selection,
    answer_text,
    score_units,
)

QUESTION = "Which comorbidities make the risks of opioid therapy outweigh benefits?"
# A unit of the cpgQA passage that opens inside a parenthesis: no quote of it passes
# the certification checks on its own.
FRAGMENT = "fibromyalgia), medical or mental health comorbidities that increase risk"


def passage(shared_data: Path, passage_id: str) -> SectionText:
    path = shared_data / "guidelines" / "cpgqa" / "passages.jsonl"
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if row["passage_id"] == passage_id:
            return SectionText(row["passage_id"], row["title"], row["text"])
    raise AssertionError(passage_id)


def fragment_first(texts: list[str]) -> np.ndarray:
    """An encoder that finds the fragment closest to any question, all else far."""
    rows = np.zeros((len(texts), 2), dtype=np.float32)
    for i, text in enumerate(texts):
        close = i == 0 or text.startswith(FRAGMENT)
        rows[i] = (1.0, 0.0) if close else (0.6, 0.8)
    return rows


async def test_the_most_similar_sentence_is_passed_over_when_not_certified(
    shared_data: Path,
) -> None:
    section = passage(shared_data, "p049")
    assert not self_certifies(answer_text(FRAGMENT), section.text)
    # The rest of a sentence whose start is elsewhere is not offered as a sentence ...
    units = score_units(QUESTION, [section])
    assert units and not any(u.text.startswith(FRAGMENT) for u in units)
    # ... and the selection sees only what the checker certifies.
    selection = await select_units(QUESTION, [section], 3, encoder=fragment_first)
    assert selection.units, "a certified sentence still answers"
    for unit in selection.units:
        assert not unit.text.startswith(FRAGMENT)
        assert self_certifies(answer_text(unit.text), section.text)


def test_an_echo_in_other_words_is_no_second_citation(shared_data: Path) -> None:
    # cpgQA says the risk-mitigation strategies twice: p125 with "include: Ongoing",
    # p038 with "include ongoing". Cited beside p125's sentence, p038's copy would not
    # certify it.
    sections = [passage(shared_data, "p125"), passage(shared_data, "p038")]
    question = "What are included in the strategies and their frequency?"
    scored = score_units(question, sections)
    chosen = next(u for u in scored if u.key == "p125" and "include:" in u.text)
    echo = next(u for u in scored if u.key == "p038" and "include ongoing" in u.text)
    same = dataclasses.replace(echo, key="p125-copy")
    by_key = {s.key: s.text for s in sections} | {"p125-copy": sections[0].text}
    place = (chosen.key, chosen.position)
    selection = Selection((chosen,), 1.0, 2, echoes={place: (echo, same)})
    kept = certified_echoes(selection, by_key)
    assert kept.echoes == {place: (same,)}
    assert not self_certifies(answer_text(chosen.text), sections[1].text)


async def test_a_follow_up_is_not_given_the_answer_before_again(
    shared_data: Path,
) -> None:
    section = passage(shared_data, "p049")
    first = await select_units(QUESTION, [section], 3)
    assert first.units
    said = " ".join(answer_text(unit.text) for unit in first.units[:1])
    # Said again with a list's number before it, it is still the same sentence.
    again = await select_units(QUESTION, [section], 3, said=f"Yes. 20. {said}")
    texts = [answer_text(unit.text) for unit in again.units]
    assert answer_text(first.units[0].text) not in texts
    assert texts == [answer_text(u.text) for u in first.units[1:]][: len(texts)]


async def test_a_follow_up_the_answer_before_answered_is_told_so() -> None:
    answered = "We recommend against long-term opioid therapy for chronic pain."
    section = SectionText(
        "g:r", "Opioids", f"{answered} Walking programs improve mood in older adults."
    )
    question = "Should long-term opioid therapy be used for chronic pain?"
    first = await select_units(question, [section], 3)
    assert [answer_text(u.text) for u in first.units] == [answered]
    again = await select_units(question, [section], 3, said=answered)
    assert again.not_found
    assert [answer_text(u.text) for u in again.given_before] == [answered]


def test_an_answer_sentence_leaves_out_the_guidelines_list_number() -> None:
    assert answer_text("2. We recommend against opioids.[12]") == (
        "We recommend against opioids."
    )
    assert answer_text("(3) Offer exercise therapy.") == "Offer exercise therapy."
    # A number that is part of what the sentence says stays.
    assert answer_text("1.5 mg is the starting dose.") == "1.5 mg is the starting dose."
    assert answer_text("2 weeks of therapy are enough.") == (
        "2 weeks of therapy are enough."
    )
