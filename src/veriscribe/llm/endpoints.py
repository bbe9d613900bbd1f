"""The model servers one SPEC may use: ``--endpoint URL`` flags and an endpoints file.

An endpoints file is TOML with one ``[[endpoint]]`` table per server::

    [[endpoint]]
    url = "http://gpu1:8000/v1"
    kind = "openai"            # or "ollama"; only endpoints of the SPEC's kind are used
    model = "qwen2.5-7b"       # the name this server knows the model by (default: SPEC's)
    max_in_flight = 8          # calls in flight at once (default: --concurrency)
    api_key_env = "GPU1_KEY"   # environment variable holding its key (never the key)

Keys are only ever read from the environment when the model is built; the file, the
database and every message name the variable, never its value.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from veriscribe.errors import ConfigError, first_problem
from veriscribe.llm.spec import ModelSpec
from veriscribe.redaction import redact_target, remember_secret, remember_secrets_in
from veriscribe.settings import Settings

Kind = Literal["openai", "ollama"]


class EndpointEntry(BaseModel):
    """One ``[[endpoint]]`` table of an endpoints file."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1)
    kind: Kind = "openai"
    model: str | None = None
    max_in_flight: int | None = Field(None, ge=1)
    api_key_env: str | None = None


@dataclass(frozen=True)
class Endpoint:
    """A model server resolved for one SPEC: where it is and how many calls it takes."""

    url: str
    kind: Kind
    model: str
    max_in_flight: int
    api_key_env: str | None = None

    @property
    def name(self) -> str:
        """Return the server's URL as it may be shown and stored (no credentials)."""
        return public_url(self.url)

    def api_key(self) -> str | None:
        """Return the key from the endpoint's environment variable (None if it has none).

        Raises:
            ConfigError: The variable is named but not set.
        """
        if self.api_key_env is None:
            return None
        value = os.environ.get(self.api_key_env, "").strip()
        if not value:
            raise ConfigError(
                f"endpoint {self.name}: environment variable {self.api_key_env} "
                "(its api_key_env) is not set"
            )
        # Whatever the variable is called, its value must never reach a message.
        remember_secret(value)
        return value


def public_url(url: str) -> str:
    """Return ``url`` without user, password, query or fragment."""
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # no URL an HTTP client takes (see checked_url)
        return redact_target(url)
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def checked_url(url: str, source: str) -> str:
    """Return a server URL as given, once HTTP clients are sure to read it so.

    A password that holds ``/ ? #``, not percent-encoded, ends the URL's host part
    early for an HTTP client: it would call another host, or fail deep inside with
    a piece of the password in its message.

    Args:
        url: The URL, scheme included.
        source: Where it was given (``--base-url``, ``OPENAI_BASE_URL``, ...).

    Raises:
        ConfigError: The URL names no host, has a bad port, or a password HTTP
            clients would cut.
    """
    # Whatever happens next, its password is hidden in every piece.
    remember_secrets_in(url)
    if "://" not in url:
        return url  # no authority to cut: the client says what it misses
    parts = urlsplit(url.strip())
    shown = redact_target(url)
    rest = url.partition("://")[2]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" in rest[len(authority) :]:
        raise ConfigError(
            f"bad server URL {shown} ({source}): a password holding / ? or # must "
            "be percent-encoded (%2F %3F %23)"
        )
    try:
        parts.port  # noqa: B018 - it is read to be checked
    except ValueError:
        raise ConfigError(f"bad server URL {shown} ({source}): bad port") from None
    if not parts.hostname:
        raise ConfigError(f"bad server URL {shown} ({source}): it names no host")
    return url


def normalise_url(url: str, kind: Kind) -> str:
    """Return a server URL with a scheme (and Ollama's port when none is given)."""
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = f"http://{url}"
    parts = urlsplit(checked_url(url, "endpoint"))
    if kind == "ollama" and parts.port is None and not parts.path:
        url = f"{url}:11434"
    return url


def read_endpoints_file(path: Path) -> list[EndpointEntry]:
    """Read and validate an endpoints file.

    Raises:
        ConfigError: The file is missing, is not TOML, or has a bad entry.
    """
    try:
        data = tomllib.loads(path.expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(
            f"cannot read endpoints file {path}: {exc.strerror or exc}"
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"endpoints file {path} is not valid TOML: {exc}") from exc
    unknown = sorted(set(data) - {"endpoint"})
    if unknown:
        raise ConfigError(
            f"endpoints file {path}: unknown key {unknown[0]!r} (use [[endpoint]] tables)"
        )
    tables = data.get("endpoint", [])
    if not isinstance(tables, list) or not tables:
        raise ConfigError(f"endpoints file {path} has no [[endpoint]] table")
    entries = []
    for number, table in enumerate(tables, 1):
        try:
            entries.append(EndpointEntry.model_validate(table))
        except ValidationError as exc:
            raise ConfigError(
                f"endpoints file {path}, endpoint {number}: "
                f"{first_problem(exc, 'entry')}"
            ) from exc
    return entries


def resolve_endpoints(spec: ModelSpec, settings: Settings) -> list[Endpoint]:
    """Return the servers ``spec`` is to use, from the flags and the endpoints file.

    An empty list means the backend's usual single server (``--base-url``,
    ``OLLAMA_HOST``, ...). Endpoints from the file are those of the SPEC's kind;
    ``--endpoint`` URLs take the SPEC's kind.

    Raises:
        ConfigError: ``--endpoint`` with a SPEC that uses no server, a bad URL or file,
            or the same server twice.
    """
    if spec.backend not in ("openai", "ollama"):
        if settings.endpoints:
            raise ConfigError(
                f"--endpoint needs an ollama:<model> or openai:<model> SPEC, not {spec}"
            )
        return []
    kind: Kind = spec.backend
    default_key = "OPENAI_API_KEY" if kind == "openai" else None
    if kind == "openai" and not os.environ.get("OPENAI_API_KEY", "").strip():
        default_key = None  # a local server needs no key
    found: list[Endpoint] = []
    if settings.endpoints_file is not None:
        for entry in read_endpoints_file(settings.endpoints_file):
            if entry.kind != kind:
                continue
            found.append(
                Endpoint(
                    url=normalise_url(entry.url, kind),
                    kind=kind,
                    model=entry.model or spec.name,
                    max_in_flight=entry.max_in_flight or settings.llm.concurrency,
                    api_key_env=entry.api_key_env or default_key,
                )
            )
    for url in settings.endpoints:
        found.append(
            Endpoint(
                url=normalise_url(url, kind),
                kind=kind,
                model=spec.name,
                max_in_flight=settings.llm.concurrency,
                api_key_env=default_key,
            )
        )
    seen: set[tuple[str, str]] = set()
    for endpoint in found:
        key = (endpoint.name, endpoint.model)
        if key in seen:
            raise ConfigError(
                f"endpoint {endpoint.name} is given twice for model {endpoint.model}"
            )
        seen.add(key)
    return found
