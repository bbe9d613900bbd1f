"""One settings tree for veriscribe, read from ``VERISCRIBE_*`` variables and CLI flags."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from platformdirs import user_data_path
from pydantic import BaseModel, ConfigDict, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

# Ten times the largest development input (a 0.5 MB eLife JATS file), and about a
# million tokens of plain text: far beyond any real article or guideline.
DEFAULT_MAX_INPUT_BYTES = 5_000_000

# Twenty-six times the most sections of a development guideline (cpgQA's 190 passages;
# the largest VA/DoD guideline has 135): every section costs a summary at ingest.
DEFAULT_MAX_SECTIONS = 5_000


def default_data_dir() -> Path:
    """Return the per-user directory where veriscribe keeps its database and models."""
    return user_data_path("veriscribe", appauthor=False)


class LLMSettings(BaseModel):
    """How model calls are made, whatever the backend."""

    model_config = ConfigDict(extra="forbid")

    temperature: float = Field(
        0.1, description="Sampling temperature (the papers use 0.1)."
    )
    context_tokens: int = Field(
        8192, ge=512, description="Context window to request (num_ctx / n_ctx)."
    )
    max_output_tokens: int = Field(
        1024, ge=16, description="Output tokens reserved in the budget of every call."
    )
    connect_timeout_s: float = Field(
        5.0,
        gt=0,
        description="Seconds a model server has to accept a connection; a server "
        "that does not is reported at once, not waited out.",
    )
    timeout_base_s: float = Field(
        30.0,
        gt=0,
        description="Fixed part of every call's timeout: connecting, a request or two "
        "queued ahead on the server, a model being loaded.",
    )
    min_prompt_tokens_per_s: float = Field(
        50.0,
        gt=0,
        description="Slowest prompt reading a working server is allowed (a 3B model on "
        "a laptop CPU reads 60-200 tokens/s): each prompt token adds 1/this seconds "
        "to the call's timeout.",
    )
    min_output_tokens_per_s: float = Field(
        4.0,
        gt=0,
        description="Slowest decoding a working server is allowed (a 3B model on a "
        "laptop CPU writes 6-15 tokens/s): each output token of the call's budget "
        "adds 1/this seconds to its timeout.",
    )
    timeout_s: float = Field(
        600.0,
        gt=0,
        description="Most seconds one call may take, however large its budget.",
    )
    local_timeout_scale: float = Field(
        3.0,
        ge=1,
        description="Multiplier of the timeout for the embedded backend, which shares "
        "the CPU with everything else and runs one call per context (a call's "
        "clock also runs while the calls ahead of it finish).",
    )
    retries: int = Field(
        2,
        ge=0,
        description="Retries of a call that failed transiently (timeout, connection, "
        "5xx, 429); after the last one the error says how long it tried.",
    )
    concurrency: int = Field(
        4,
        ge=1,
        description="Model calls in flight at once (per process; with several "
        "endpoints, per endpoint that sets no max_in_flight).",
    )
    threads: int = Field(2, ge=1, description="CPU threads of the embedded backend.")
    local_contexts: int | None = Field(
        None,
        ge=1,
        description="Calls the embedded backend runs at once, each in its own llama "
        "context on threads/contexts threads (at most `threads` contexts), or with "
        "`batched`, as that many sequences of one context; default: the concurrency.",
    )
    lookup: bool = Field(
        False,
        description="Embedded backend: draft the next tokens from where the last ones "
        "appear in the prompt and check them in one batch (prompt-lookup decoding). "
        "Faster on summaries, but batched evaluation rounds differently, so replies "
        "differ from one-token-at-a-time decoding.",
    )
    batched: bool = Field(
        False,
        description="Embedded backend: run the calls in flight as sequences of one "
        "llama context on all the threads, and decode their next tokens in one batch "
        "per step. Replies of calls that run side by side can differ from the same "
        "calls run alone (batched evaluation rounds differently).",
    )
    openai_schema: Literal["json_object", "json_object_schema", "json_schema"] = Field(
        "json_object",
        description="How `openai:` structured calls send their JSON schema: "
        "`json_object` (JSON mode, no schema: decoding is not constrained), "
        "`json_object_schema` (llama.cpp servers: the schema beside JSON mode) or "
        "`json_schema` (OpenAI structured outputs, vLLM, llama-server).",
    )
    cache: bool = Field(True, description="Reuse stored responses for identical calls.")
    cache_sim: bool = Field(
        False,
        description="Cache the simulated backend's responses too (batches turn it on, "
        "so that a killed run on `sim` repeats no finished call).",
    )


class Settings(BaseSettings):
    """All of veriscribe's settings; every field can be set as ``VERISCRIBE_<NAME>``."""

    model_config = SettingsConfigDict(
        env_prefix="VERISCRIBE_", env_nested_delimiter="__", extra="forbid"
    )

    db: Path | str = Field(
        default_factory=lambda: default_data_dir() / "veriscribe.sqlite",
        description="Database holding runs, checkpoints, corpora and call logs: a SQLite "
        "file (a path or sqlite:PATH) or a PostgreSQL DSN (postgresql://... or libpq's "
        "keywords, host=... dbname=...).",
    )
    model: str = Field(
        "local", description="Default model SPEC (see `veriscribe doctor`)."
    )
    lease_s: float = Field(
        120.0,
        ge=1.0,
        description="Seconds a batch worker's claim on an article lasts without a "
        "heartbeat; after that another worker takes the article over.",
    )
    local_model: Path | None = Field(
        None,
        description="GGUF file for the `local` backend; default: the bundled model.",
    )
    base_url: str | None = Field(
        None, description="Base URL for `openai:` SPECs (else OPENAI_BASE_URL)."
    )
    endpoints: list[str] = Field(
        default_factory=list,
        description="More servers for an `openai:`/`ollama:` SPEC (`--endpoint URL`, "
        "repeated): calls are balanced over them and fail over between them.",
    )
    endpoints_file: Path | None = Field(
        None,
        description="TOML file of `[[endpoint]]` servers (url, kind, model, "
        "max_in_flight, api_key_env); also `--endpoints FILE`.",
    )
    max_input_bytes: int = Field(
        DEFAULT_MAX_INPUT_BYTES,
        ge=1,
        description="Largest article or guideline file (or JSON-lines record) read "
        "for the model; a larger one is refused before it costs any model call.",
    )
    read_timeout_s: float = Field(
        60.0,
        gt=0,
        description="Seconds one article or guideline file may take to read; a file "
        "that takes longer is stopped and refused (a broken or hostile file), and "
        "the others are read.",
    )
    read_memory_mb: int = Field(
        2048,
        ge=256,
        description="Memory (address space, MiB) of the process reading one file; a "
        "file that needs more is refused, and the others are read.",
    )
    max_sections: int = Field(
        DEFAULT_MAX_SECTIONS,
        ge=1,
        description="Most sections one guideline document may have; a document with "
        "more is refused before any of it is stored or summarised.",
    )
    cpu_workers: int | None = Field(
        None,
        ge=0,
        le=64,
        description="Worker processes a batch runs its text steps in (first sentences, "
        "the abstract's checks), beside the event loop; 0: none. Default: one fewer "
        "than the cores (at most 4) for 32 articles or more on a model server, none "
        "beside the embedded model.",
    )
    llm: LLMSettings = Field(default_factory=LLMSettings)

    def with_overrides(self, **changes: object) -> Settings:
        """Return a copy with the given non-None fields replaced."""
        update = {k: v for k, v in changes.items() if v is not None}
        return self.model_copy(update=update)
