import pytest
from pydantic import BaseModel

from veriscribe.llm.structured import ParseFailure, loads_lenient, parse_model


class Summary(BaseModel):
    summary: str
    reasoning: str = ""


@pytest.mark.parametrize(
    "raw",
    [
        '{"summary": "ok"}',
        '```json\n{"summary": "ok"}\n```',
        'Here is the JSON: {"summary": "ok"} Hope it helps.',
        '{"summary": "ok",}',
        "{'summary': 'ok'}",
    ],
)
def test_lenient_parsing_recovers_common_slips(raw: str) -> None:
    assert parse_model(raw, Summary).summary == "ok"


@pytest.mark.parametrize("raw", ["", "   ", "I cannot help with that"])
def test_non_json_is_a_parse_failure(raw: str) -> None:
    with pytest.raises(ParseFailure):
        parse_model(raw, Summary)


def test_wrong_shape_names_the_field() -> None:
    with pytest.raises(ParseFailure) as info:
        parse_model('{"abstract": "x"}', Summary)
    assert "summary" in info.value.reason


def test_loads_lenient_keeps_plain_json() -> None:
    assert loads_lenient("[1, 2]") == [1, 2]
