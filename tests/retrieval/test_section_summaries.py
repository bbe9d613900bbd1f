"""One-line section summaries: the reply's lines, and the lead when a line is missing."""

from __future__ import annotations

from fakes import scripted_llm
from qa_helpers import section_row
from veriscribe.retrieval.section_summaries import (
    clip,
    lead_summary,
    parse_summary_lines,
    summarize_sections,
)


def test_parse_summary_lines_accepts_numbering_variants() -> None:
    reply = (
        "1: Covers blood pressure measurement.\n"
        "Some chatter.\n"
        "[2] Covers sodium intake in adults.\n"
        "3. Covers drug treatment choices.\n"
        "3: Covers a duplicate that is ignored.\n"
        "9: Covers a section that does not exist.\n"
        "4: short\n"
    )
    found = parse_summary_lines(reply, 4)
    assert found == {
        1: "Covers blood pressure measurement.",
        2: "Covers sodium intake in adults.",
        3: "Covers drug treatment choices.",
    }


def test_clip_and_lead_summary() -> None:
    assert clip("a b c d e f", 5, "...") == "a b..."
    text = "First sentence about dosing. Second sentence."
    assert lead_summary(section_row("g:x", text)) == "First sentence about dosing."


async def test_missing_lines_are_asked_again_then_fall_back_to_lead() -> None:
    sections = [
        section_row(f"g:s{i}", f"Section {i} text about topic {i}.") for i in range(3)
    ]
    replies = [
        "1: Covers topic zero in detail.",  # stops early
        "1: Covers topic one in detail.",  # the retry: sections 1 and 2
    ]
    llm = scripted_llm(replies)
    result = await summarize_sections(llm, sections)
    sources = [(u.section_id, u.source) for u in result.updates]
    assert sources == [("s0", "model"), ("s1", "model"), ("s2", "lead")]
    assert result.updates[2].summary == "Section 2 text about topic 2."
    assert result.usage.calls == 2
