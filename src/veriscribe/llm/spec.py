"""Model SPEC strings: ``local[:NAME]``, ``ollama:<m>``, ``openai:<m>``, ``sim[:k=v,...]``.

``NAME`` of ``local`` is a bundled model (``1.5b``) or a GGUF file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from veriscribe.errors import ConfigError

Backend = Literal["local", "ollama", "openai", "sim"]
BACKENDS: tuple[Backend, ...] = ("local", "ollama", "openai", "sim")


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model SPEC."""

    backend: Backend
    name: str
    params: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        if self.backend == "sim":
            extra = ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))
            return f"sim:{extra}" if extra else "sim"
        if self.backend == "local":
            return "local" if not self.name else f"local:{self.name}"
        return f"{self.backend}:{self.name}"


def parse_spec(text: str) -> ModelSpec:
    """Parse a SPEC string, raising ConfigError with the accepted forms on a bad one."""
    text = text.strip()
    backend, _, rest = text.partition(":")
    if backend == "local":
        return ModelSpec("local", rest)
    if backend in ("ollama", "openai"):
        if not rest:
            raise ConfigError(
                f"model SPEC {text!r} names no model: use {backend}:<model>"
            )
        return ModelSpec(backend, rest)  # type: ignore[arg-type]
    if backend == "sim":
        params: dict[str, str] = {}
        for item in filter(None, rest.split(",")):
            key, sep, value = item.partition("=")
            if not sep or key not in ("latency", "fail", "seed"):
                raise ConfigError(
                    f"bad sim option {item!r}: use sim:latency=SECONDS,fail=RATE,seed=N"
                )
            params[key] = value
        return ModelSpec("sim", "sim", params)
    raise ConfigError(
        f"unknown model SPEC {text!r}: use local[:1.5b or :FILE.gguf], ollama:<model>, "
        "openai:<model> or sim[:latency=S,fail=RATE,seed=N]"
    )
