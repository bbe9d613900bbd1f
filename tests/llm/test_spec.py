import pytest

from veriscribe.errors import ConfigError
from veriscribe.llm.spec import ModelSpec, parse_spec


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("local", ModelSpec("local", "")),
        ("ollama:llama3.2:3b", ModelSpec("ollama", "llama3.2:3b")),
        ("openai:gpt-4o-mini", ModelSpec("openai", "gpt-4o-mini")),
        ("sim", ModelSpec("sim", "sim", {})),
        (
            "sim:latency=0.2,fail=0.1,seed=3",
            ModelSpec("sim", "sim", {"latency": "0.2", "fail": "0.1", "seed": "3"}),
        ),
    ],
)
def test_parse_spec(text: str, expected: ModelSpec) -> None:
    assert parse_spec(text) == expected


@pytest.mark.parametrize("text", ["ollama", "openai:", "gpt4", "sim:speed=3", "sim:x"])
def test_bad_specs_say_what_is_accepted(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_spec(text)
    assert "use" in info.value.user_message


def test_spec_round_trips_to_text() -> None:
    assert str(parse_spec("sim:seed=1,latency=0.5")) == "sim:latency=0.5,seed=1"
    assert str(parse_spec("ollama:llama3.2:3b")) == "ollama:llama3.2:3b"
