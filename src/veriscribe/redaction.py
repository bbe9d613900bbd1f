"""Keep secrets out of every message, log line and stored error.

A server may echo the API key it refused in its error body, a URL or a database DSN
may carry a password, and a library may quote a malformed DSN back, so every text that
leaves veriscribe's hands (error lines, the call log, stored run errors, the error log
and its command line, tracebacks, the endpoints a result names) goes through
:func:`redact`, the one redaction. It hides:

* URL userinfo with a password (``scheme://user:password@``), also percent-encoded;
* the value of every secret-like parameter, in a query string (``?api-token=...``), a
  libpq keyword DSN (``password=... host=...``, quoted values too), a JSON-ish
  ``"api_key": "..."`` pair, or percent-encoded (``%3Fapi_key%3D...``);
* bearer and basic credentials, OpenAI-style keys, and the token libpq quotes back
  when a DSN has a bad percent escape;
* the values of secret-named environment variables and of keys read from variables
  named in configuration (:func:`remember_secret`), raw and percent-encoded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, unquote

REDACTED = "[REDACTED]"

# Environment variables whose values are secrets: OPENAI_API_KEY, HF_TOKEN,
# AWS_SECRET_ACCESS_KEY, DB_PASSWORD, ...
_SECRET_NAME = re.compile(
    r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_KEY|AUTH)$", re.IGNORECASE
)
# Shorter values are not secrets worth the name, and replacing them everywhere
# ("1", "true") would garble the message instead.
_MIN_SECRET_CHARS = 6
# Values known to be secrets (a DSN's password) are hidden from this length on.
_MIN_GIVEN_CHARS = 3

# A parameter name that holds a secret. Long words count anywhere in the name
# (sslpassword, client_secret, apiKey, api-token); short ones only as a whole part
# between separators (x-api-key, pwd, auth), so that "keyword" or "passage_id" stay.
# "tokens" is a count (max_tokens), not a token.
_NAME_CHAR = r"[A-Za-z0-9_.\-]"
_SECRET_PARAM = (
    rf"(?:{_NAME_CHAR}*(?:password|passwd|passphrase|secret|api_?key|credential"
    rf"|token(?![A-Za-z])){_NAME_CHAR}*"
    rf"|(?:{_NAME_CHAR}*[-_.])?(?:key|pwd|pass|auth|authorization|signature|sig)"
    rf"(?:[-_.]{_NAME_CHAR}*)?)"
)
# Where a keyword (not query) parameter may start: after no name character and no
# query separator (those are the query pattern's, whose values end at '&').
_KEYWORD_START = r"(?<![A-Za-z0-9_.\-%?&;])"
_QUOTED = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
# Each pattern's group ``keep`` stays, its group ``secret`` is replaced.
_BEARER = re.compile(
    # Authorization headers and bearer tokens, wherever a library printed them.
    r"(?i)\b(?P<keep>(?:bearer|basic)\s+)(?P<secret>[A-Za-z0-9._~+/=-]{6,})"
)
_USERINFO = re.compile(
    # Credentials in URLs: scheme://user:password@host (the password may hold '@').
    r"(?i)\b(?P<keep>[a-z][a-z0-9+.-]*://)(?P<secret>[^\s/?#@:]*:[^\s/?#]*)@"
)
_ENCODED_USERINFO = re.compile(
    # The same, percent-encoded inside another URL: http%3A%2F%2Fuser%3Apw%40host
    r"(?i)(?P<keep>%3A%2F%2F)(?P<secret>(?:(?!%2F|%3F|%23|%40)[^\s/?#&])*"
    r"%3A(?:(?!%2F|%3F|%23|%40)[^\s/?#&])*)%40"
)
_QUERY_PARAM = re.compile(
    # A secret parameter in a query string: its value ends at '&', '#' or a quote.
    rf"(?i)(?P<keep>(?:[?&;]|(?<=%26)|(?<=%3[Ff])){_SECRET_PARAM}(?:=|%3D))"
    rf"(?P<secret>(?:(?!%26)[^\s&#'\"])+)"
)
_KEYWORD_PARAM = re.compile(
    # A secret keyword of a libpq DSN (password=... host=...) or of any other
    # key=value text: quoted, or up to the next blank (backslash escapes included).
    rf"(?i)(?P<keep>{_KEYWORD_START}{_SECRET_PARAM}\s*(?:=|%3D)\s*)"
    rf"(?P<secret>{_QUOTED}|(?:\\.|[^\s\\])+)"
)
_QUOTED_PAIR = re.compile(
    # A JSON or repr pair: "api_key": "value"
    rf"(?i)(?P<keep>([\"']){_SECRET_PARAM}\2\s*:\s*)(?P<secret>{_QUOTED})"
)
_BAD_ESCAPE = re.compile(
    # libpq quotes a DSN part with a bad percent escape back whole: the password.
    r"(?i)(?P<keep>percent-encoded (?:token|value): )(?P<secret>\"[^\"]*\")"
)
_OPENAI_KEY = re.compile(
    # OpenAI-style keys, even when they did not come from this environment.
    r"(?P<keep>)(?P<secret>\bsk-[A-Za-z0-9_-]{20,})"
)
_PATTERNS = (
    _BEARER,
    _USERINFO,
    _ENCODED_USERINFO,
    _QUERY_PARAM,
    _KEYWORD_PARAM,
    _QUOTED_PAIR,
    _BAD_ESCAPE,
    _OPENAI_KEY,
)
# Keys read from variables named in configuration (an endpoint's ``api_key_env``)
# and passwords of the databases and servers in use, whatever their names.
_remembered: set[str] = set()


def remember_secret(value: str) -> None:
    """Redact ``value`` from every later text, whatever variable it came from."""
    if len(value.strip()) >= _MIN_SECRET_CHARS:
        _remembered.add(value.strip())


def remember_secrets_in(text: str) -> None:
    """Redact the passwords and keys that a URL or DSN carries from every later text.

    A library may quote them back in a form no pattern knows (decoded, or cut out of
    the URL), so their values are hidden wherever they appear.
    """
    for value in secrets_in(text):
        remember_secret(value)


def secrets_in(text: str) -> list[str]:
    """Return the secret values that :func:`redact` hides in ``text``, decoded too."""
    found: set[str] = set()
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            value = match.group("secret")
            if pattern is _ENCODED_USERINFO:
                value = unquote(value)
            if pattern in (_USERINFO, _ENCODED_USERINFO):
                value = value.partition(":")[2]  # the password, not the user name
            value = _unquoted(value)
            found |= {value, unquote(value)}
    # "authorization=Bearer xyz": the scheme's name is no secret.
    found -= {"", "Bearer", "bearer", "Basic", "basic"}
    return sorted(found, key=len, reverse=True)


def _forms(value: str) -> set[str]:
    """Return a secret as written and as it would appear percent-encoded in a URL."""
    return {value, quote(value, safe=""), quote(value, safe="/:")}


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Return the secret-looking environment values and remembered keys, longest first."""
    env = os.environ if environ is None else environ
    values = {
        value.strip()
        for name, value in env.items()
        if _SECRET_NAME.search(name) and len(value.strip()) >= _MIN_SECRET_CHARS
    } | _remembered
    forms: set[str] = set()
    for value in values:
        forms |= _forms(value)
    return sorted(forms, key=len, reverse=True)


def _unquoted(value: str) -> str:
    if len(value) > 1 and value[0] in "'\"" and value[-1] == value[0]:
        return value[1:-1]
    return value


def _hide(match: re.Match[str]) -> str:
    secret = match.group("secret")
    # A quoted value keeps its quotes, so the text around it still reads (and parses).
    quote_char = secret[0] if _unquoted(secret) != secret else ""
    rest = match.string[match.end("secret") : match.end()]
    return f"{match.group('keep')}{quote_char}{REDACTED}{quote_char}{rest}"


def redact(
    text: str,
    environ: Mapping[str, str] | None = None,
    *,
    also: Iterable[str] = (),
) -> str:
    """Return ``text`` with API keys, tokens, passwords and credentials replaced.

    Args:
        text: Any text about to be printed, logged or stored.
        environ: The environment whose secret-named variables are hidden (default:
            this process's).
        also: More secret values to hide, known to be secrets (so shorter ones
            than the environment's count, from three characters).
    """
    given = (value for value in also if len(value) >= _MIN_GIVEN_CHARS)
    known = {*secret_values(environ), *(form for v in given for form in _forms(v))}
    for value in sorted(known, key=len, reverse=True):
        text = text.replace(value, REDACTED)
    for pattern in _PATTERNS:
        text = pattern.sub(_hide, text)
    return text
