"""One settings tree for veriscribe, read from ``VERISCRIBE_*`` variables and CLI flags."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from platformdirs import user_data_path
from pydantic import BaseModel, ConfigDict, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


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
    timeout_s: float = Field(
        600.0, gt=0, description="Seconds before a call times out."
    )
    retries: int = Field(
        2, ge=0, description="Retries of a call that failed transiently."
    )
    concurrency: int = Field(
        4, ge=1, description="Model calls in flight at once (per process)."
    )
    threads: int = Field(2, ge=1, description="CPU threads of the embedded backend.")
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

    db: Path = Field(
        default_factory=lambda: default_data_dir() / "veriscribe.sqlite",
        description="SQLite database holding runs, checkpoints, corpora and call logs.",
    )
    model: str = Field(
        "local", description="Default model SPEC (see `veriscribe doctor`)."
    )
    local_model: Path | None = Field(
        None,
        description="GGUF file for the `local` backend; default: the bundled model.",
    )
    base_url: str | None = Field(
        None, description="Base URL for `openai:` SPECs (else OPENAI_BASE_URL)."
    )
    llm: LLMSettings = Field(default_factory=LLMSettings)

    def with_overrides(self, **changes: object) -> Settings:
        """Return a copy with the given non-None fields replaced."""
        update = {k: v for k, v in changes.items() if v is not None}
        return self.model_copy(update=update)
