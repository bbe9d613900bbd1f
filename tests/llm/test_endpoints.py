"""Which servers a SPEC uses: --endpoint flags, an endpoints file, and their mistakes."""

from __future__ import annotations

from pathlib import Path

import pytest

from veriscribe.errors import ConfigError
from veriscribe.llm.endpoints import (
    Endpoint,
    normalise_url,
    public_url,
    read_endpoints_file,
    resolve_endpoints,
)
from veriscribe.llm.factory import make_llm
from veriscribe.llm.spec import parse_spec
from veriscribe.redaction import REDACTED, redact
from veriscribe.service.endpoint_usage import percentile, summarise_calls
from veriscribe.settings import LLMSettings, Settings

FILE = """
[[endpoint]]
url = "http://gpu1:8000/v1"
model = "qwen-7b"
max_in_flight = 8
api_key_env = "GPU1_KEY"

[[endpoint]]
url = "gpu2:8000/v1/"

[[endpoint]]
url = "ollama-box"
kind = "ollama"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "endpoints.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_file_entries_of_the_specs_kind_are_used(tmp_path: Path) -> None:
    settings = Settings(
        endpoints_file=write(tmp_path, FILE), llm=LLMSettings(concurrency=3)
    )
    found = resolve_endpoints(parse_spec("openai:qwen"), settings)
    assert found == [
        Endpoint("http://gpu1:8000/v1", "openai", "qwen-7b", 8, "GPU1_KEY"),
        Endpoint("http://gpu2:8000/v1", "openai", "qwen", 3, None),
    ]
    ollama = resolve_endpoints(parse_spec("ollama:llama3.2:3b"), settings)
    assert [(e.url, e.model) for e in ollama] == [
        ("http://ollama-box:11434", "llama3.2:3b")
    ]
    # The file describes servers: a SPEC that uses none ignores it.
    assert resolve_endpoints(parse_spec("sim"), settings) == []


def test_flags_add_servers_of_the_specs_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    settings = Settings(endpoints=["http://a:1/v1", "http://b:2/v1"])
    found = resolve_endpoints(parse_spec("openai:m"), settings)
    assert [(e.url, e.kind, e.max_in_flight, e.api_key_env) for e in found] == [
        ("http://a:1/v1", "openai", 4, "OPENAI_API_KEY"),
        ("http://b:2/v1", "openai", 4, "OPENAI_API_KEY"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[endpoint]\nurl=", "not valid TOML"),
        ("[server]\nurl = 'x'", "unknown key 'server'"),
        ("", "no [[endpoint]] table"),
        ("[[endpoint]]\nkind = 'openai'", "endpoint 1: url: Field required"),
        ("[[endpoint]]\nurl = 'a'\nkind = 'vllm'", "endpoint 1: kind:"),
        ("[[endpoint]]\nurl = 'a'\nmax_in_flight = 0", "max_in_flight"),
        ("[[endpoint]]\nurl = 'a'\napi_key = 'sk-x'", "api_key: Extra inputs"),
    ],
)
def test_a_bad_file_is_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match="endpoints file") as info:
        read_endpoints_file(write(tmp_path, text))
    assert message in info.value.user_message


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read endpoints file"):
        read_endpoints_file(tmp_path / "nope.toml")


def test_endpoint_flags_need_a_server_spec() -> None:
    with pytest.raises(ConfigError, match="--endpoint needs an ollama"):
        resolve_endpoints(parse_spec("sim"), Settings(endpoints=["http://a:1/v1"]))


def test_the_same_server_twice_is_refused() -> None:
    settings = Settings(endpoints=["http://a:1/v1", "a:1/v1/"])
    with pytest.raises(ConfigError, match="given twice"):
        resolve_endpoints(parse_spec("openai:m"), settings)


def test_a_missing_key_variable_names_the_variable(tmp_path: Path) -> None:
    text = "[[endpoint]]\nurl = 'http://a:1/v1'\napi_key_env = 'NOPE_KEY'\n"
    settings = Settings(endpoints_file=write(tmp_path, text))
    with pytest.raises(ConfigError, match="NOPE_KEY"):
        make_llm("openai:m", settings)


def test_a_key_from_any_variable_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A name redaction would not guess is secret: only its use as a key marks it.
    monkeypatch.setenv("GPU_ONE", "s3cr3t-value-xyz")
    text = "[[endpoint]]\nurl = 'http://a:1/v1'\napi_key_env = 'GPU_ONE'\n"
    assert "s3cr3t-value-xyz" in redact("key s3cr3t-value-xyz")
    make_llm("openai:m", Settings(endpoints_file=write(tmp_path, text)))
    assert redact("key s3cr3t-value-xyz") == f"key {REDACTED}"


def test_urls_shown_carry_no_credentials() -> None:
    assert public_url("http://bob:pw@gpu1:8000/v1/?key=abc#x") == "http://gpu1:8000/v1"
    assert normalise_url("gpu1:8000/v1/", "openai") == "http://gpu1:8000/v1"
    assert normalise_url("box", "ollama") == "http://box:11434"
    with pytest.raises(ConfigError, match="names no host"):
        normalise_url("http:///v1", "openai")


def test_one_endpoint_is_a_plain_server_backend() -> None:
    settings = Settings(endpoints=["http://a:1/v1"], llm=LLMSettings(concurrency=3))
    llm = make_llm("openai:m", settings)
    assert llm.pool is None
    assert llm.endpoint == "http://a:1/v1"
    assert llm.settings.concurrency == 3


def test_several_endpoints_make_a_pool_as_wide_as_their_limits(
    tmp_path: Path,
) -> None:
    settings = Settings(
        endpoints_file=write(tmp_path, FILE.replace('api_key_env = "GPU1_KEY"', "")),
        endpoints=["http://c:3/v1"],
        llm=LLMSettings(concurrency=2),
    )
    llm = make_llm("openai:qwen", settings)
    assert llm.pool is not None
    assert [(m.name, m.max_in_flight) for m in llm.pool.members] == [
        ("http://gpu1:8000/v1", 8),
        ("http://gpu2:8000/v1", 2),
        ("http://c:3/v1", 2),
    ]
    # Callers size their work (a batch's articles in flight) by this.
    assert llm.settings.concurrency == 12
    assert llm.label == "openai:qwen"


def test_calls_per_endpoint_are_summarised() -> None:
    rows = [
        ("http://a", "ok", 100, 10, 0.2),
        ("http://a", "ok", 100, 20, 0.4),
        ("http://a", "ok", 100, 30, 1.0),
        ("http://a", "unavailable", 100, 0, 0.01),
        ("http://b", "timeout", 50, 0, 5.0),
        (None, "cached", 100, 10, 0.0),
    ]
    assert [e.model_dump() for e in summarise_calls(rows)] == [
        {
            "endpoint": "http://a",
            "calls": 4,
            "ok": 3,
            "errors": 1,
            "prompt_tokens": 300,
            "output_tokens": 60,
            "latency_p50_s": 0.4,
            "latency_p95_s": 1.0,
        },
        {
            "endpoint": "http://b",
            "calls": 1,
            "ok": 0,
            "errors": 1,
            "prompt_tokens": 0,
            "output_tokens": 0,
            "latency_p50_s": None,
            "latency_p95_s": None,
        },
    ]
    assert [percentile(list(range(1, 101)), q) for q in (0.5, 0.95)] == [50, 95]
