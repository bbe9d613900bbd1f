"""Keep secrets out of every message, log line and stored error.

A server may echo the API key it refused in its error body, and a URL may carry a
password, so every text that leaves veriscribe's hands from a backend (error lines,
the call log, the error log, tracebacks) goes through :func:`redact`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

REDACTED = "[REDACTED]"

# Environment variables whose values are secrets: OPENAI_API_KEY, HF_TOKEN,
# AWS_SECRET_ACCESS_KEY, DB_PASSWORD, ...
_SECRET_NAME = re.compile(
    r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_KEY|AUTH)$", re.IGNORECASE
)
# Shorter values are not secrets worth the name, and replacing them everywhere
# ("1", "true") would garble the message instead.
_MIN_SECRET_CHARS = 6
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Authorization headers and bearer tokens, wherever a library printed them.
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}"), rf"\1 {REDACTED}"),
    # Credentials in URLs: scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@"), rf"\1{REDACTED}@"),
    # Keys in query strings.
    (
        re.compile(r"(?i)([?&](?:api[_-]?key|key|token|access_token|secret)=)[^&\s]+"),
        rf"\1{REDACTED}",
    ),
    # OpenAI-style keys, even when they did not come from this environment.
    (re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"), REDACTED),
)
# Keys read from variables named in configuration (an endpoint's ``api_key_env``),
# whatever those variables are called.
_remembered: set[str] = set()


def remember_secret(value: str) -> None:
    """Redact ``value`` from every later text, whatever variable it came from."""
    if len(value.strip()) >= _MIN_SECRET_CHARS:
        _remembered.add(value.strip())


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Return the secret-looking environment values and remembered keys, longest first."""
    env = os.environ if environ is None else environ
    values = {
        value.strip()
        for name, value in env.items()
        if _SECRET_NAME.search(name) and len(value.strip()) >= _MIN_SECRET_CHARS
    } | _remembered
    return sorted(values, key=len, reverse=True)


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """Return ``text`` with API keys, tokens and URL passwords replaced."""
    for value in secret_values(environ):
        text = text.replace(value, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
