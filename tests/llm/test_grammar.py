"""Grammars built from document text: every literal reads back as the text it came from."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from veriscribe.llm.embedded.grammar import gbnf_literal, json_text, schema_grammar
from veriscribe.nodes.qa.constrained import SourceUnit, SourceUnits, quote_constraint

NGC = (
    'The definitions of these grades can be found at the end of the "Major '
    'Recommendations" field.'
)


def read_literal(literal: str) -> str:
    """Decode a GBNF string literal the way llama.cpp's parser does."""
    assert literal[0] == '"' and literal[-1] == '"'
    out: list[str] = []
    body = literal[1:-1]
    i = 0
    simple = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "[": "[", "]": "]"}
    while i < len(body):
        char = body[i]
        assert char != '"', f"unescaped quote ends the literal early at {i}"
        if char != "\\":
            out.append(char)
            i += 1
            continue
        kind = body[i + 1]
        if kind in simple:
            out.append(simple[kind])
            i += 2
            continue
        width = {"x": 2, "u": 4, "U": 8}[kind]
        out.append(chr(int(body[i + 2 : i + 2 + width], 16)))
        i += 2 + width
    return "".join(out)


@given(st.text())
def test_a_literal_reads_back_as_its_text(text: str) -> None:
    assert read_literal(gbnf_literal(text)) == text


@given(st.text(st.characters(exclude_categories=("Cs",))))
def test_a_constant_is_the_json_text_of_its_value(text: str) -> None:
    assert json.loads(json_text(text)) == text


def test_quotes_and_backslashes_stay_inside_the_literal() -> None:
    for text in (NGC, "a \\ b", "ends with backslash \\", '\\"', "tab\there\x01\x7f"):
        literal = gbnf_literal(json_text(text))
        assert json.loads(read_literal(literal)) == text


def test_non_ascii_is_kept_as_text_not_escaped() -> None:
    # The model writes "é" as itself, not as the six characters of its JSON escape.
    assert gbnf_literal(json_text("β-blocker ≥ 5 mg")) == '"\\"β-blocker ≥ 5 mg\\""'


def test_the_answer_grammar_holds_each_unit_as_one_literal() -> None:
    units = SourceUnits(
        (
            SourceUnit("S1", "ngc:grades", NGC),
            SourceUnit("S2", "ngc:grades", 'Use C:\\path and a "quoted" word.'),
        )
    )
    grammar = schema_grammar(quote_constraint(units, 3))
    literals = re.findall(r'"(?:[^"\\]|\\.)*"', grammar)
    decoded = {read_literal(lit) for lit in literals}
    assert json.dumps(NGC) in decoded
    assert json.dumps('Use C:\\path and a "quoted" word.') in decoded
