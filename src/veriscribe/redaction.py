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
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
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
_SECRET_NAME_PARTS = re.compile(
    r"(?i).*(?:password|passwd|passphrase|secret|api_?key|credential"
    r"|token(?![a-z])).*"
    r"|(?:.*[-_.])?(?:key|pwd|pass|auth|authorization|signature|sig)(?:[-_.].*)?"
)
# A parameter's name, taken whole (possessively: no backtracking into it, so a long
# run of name characters costs one pass) and checked against the words after.
_NAME = r"(?P<name>[A-Za-z0-9_.\-]{1,100}+)"
# Where a keyword (not query) parameter may start: after no name character and no
# query separator (those are the query pattern's, whose values end at '&').
_KEYWORD_START = r"(?<![A-Za-z0-9_.\-%?&;])"
_QUOTED = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""


@dataclass(frozen=True)
class _Rule:
    """Where one kind of secret sits in a text."""

    find: re.Pattern[str]
    """Finds the secret (its group ``secret``), or a parameter's name (``name``)."""
    value: re.Pattern[str] | None = None
    """A parameter's value after ``find``: the secret, when the name is a secret's."""


# Every pattern below is linear in the text: names and schemes are taken
# possessively, and a value is only read after a name that says it is a secret.
_BEARER = _Rule(
    # Authorization headers and bearer tokens, wherever a library printed them.
    re.compile(r"(?i)\b(?:bearer|basic)\s+(?P<secret>[A-Za-z0-9._~+/=-]{6,})")
)
_USERINFO = _Rule(
    # Credentials in URLs: scheme://user:password@host (the password may hold '@').
    re.compile(
        r"(?i)(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*+://"
        r"(?P<secret>[^\s/?#@:]*+:[^\s/?#]*)@"
    )
)
_ENCODED_USERINFO = _Rule(
    # The same, percent-encoded inside another URL: http%3A%2F%2Fuser%3Apw%40host
    re.compile(
        r"(?i)%3A%2F%2F(?P<secret>(?:(?!%2F|%3F|%23|%40|%3A)[^\s/?#&])*+"
        r"%3A(?:(?!%2F|%3F|%23)[^\s/?#&])*)%40"
    )
)
_QUERY_PARAM = _Rule(
    # A secret parameter in a query string: its value ends at '&', '#' or a quote.
    re.compile(rf"(?i)(?:[?&;]|(?<=%26)|(?<=%3[Ff])){_NAME}(?:=|%3D)"),
    re.compile(r"(?:(?!%26)[^\s&#'\"])+"),
)
_KEYWORD_PARAM = _Rule(
    # A secret keyword of a libpq DSN (password=... host=...) or of any other
    # key=value text: quoted, or up to the next blank (backslash escapes included).
    re.compile(rf"(?i){_KEYWORD_START}{_NAME}\s*(?:=|%3D)\s*"),
    re.compile(rf"{_QUOTED}|(?:\\.|[^\s\\])+"),
)
_QUOTED_PAIR = _Rule(
    # A JSON or repr pair: "api_key": "value"
    re.compile(rf"(?P<q>[\"']){_NAME}(?P=q)\s*:\s*"),
    re.compile(_QUOTED),
)
_BAD_ESCAPE = _Rule(
    # libpq quotes a DSN part with a bad percent escape back whole: the password.
    re.compile(r"(?i)percent-encoded (?:token|value): (?P<secret>\"[^\"]*\")")
)
_OPENAI_KEY = _Rule(
    # OpenAI-style keys, even when they did not come from this environment.
    re.compile(r"(?P<secret>\bsk-[A-Za-z0-9_-]{20,})")
)
_RULES = (
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
    for rule in _RULES:
        for begin, end in _secret_spans(rule, text):
            value = text[begin:end]
            if rule is _ENCODED_USERINFO:
                value = unquote(value)
            if rule in (_USERINFO, _ENCODED_USERINFO):
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


def _secret_spans(rule: _Rule, text: str) -> Iterator[tuple[int, int]]:
    """Yield where the rule's secrets are in ``text``, left to right, none overlapping.

    A parameter whose name is no secret's ("host=...") is passed over by its name
    only, so that a secret in its value ("next=token=...") is still found.
    """
    at = 0
    while (match := rule.find.search(text, at)) is not None:
        if rule.value is None:
            yield match.span("secret")
            at = max(match.end(), match.start() + 1)
        elif not _SECRET_NAME_PARTS.fullmatch(match.group("name")):
            at = match.end("name")
        elif (value := rule.value.match(text, match.end())) is not None:
            yield value.span()
            at = value.end()
        else:
            at = match.end()


def _hidden(secret: str) -> str:
    """Return what replaces a secret: a quoted one keeps its quotes."""
    # With its quotes kept, the text around it still reads (and parses).
    quote_char = secret[0] if _unquoted(secret) != secret else ""
    return f"{quote_char}{REDACTED}{quote_char}"


def _sub(rule: _Rule, text: str) -> str:
    parts: list[str] = []
    done = 0
    for begin, end in _secret_spans(rule, text):
        parts += [text[done:begin], _hidden(text[begin:end])]
        done = end
    return "".join(parts) + text[done:]


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
    # Every span is found in the text as given, then the spans are hidden together: a
    # known value replaced first could cut into a parameter's name ("client_secret"
    # with the value "secret" known) and leave that parameter's own value unseen.
    spans = [span for rule in _RULES for span in _secret_spans(rule, text)]
    for value in known:
        at = text.find(value)
        while at >= 0:
            spans.append((at, at + len(value)))
            at = text.find(value, at + 1)
    parts: list[str] = []
    done = 0
    for begin, end in _merged(spans):
        parts += [text[done:begin], _hidden(text[begin:end])]
        done = end
    text = "".join(parts) + text[done:]
    # What a rule finds only once another's secret is hidden is hidden too.
    for rule in _RULES:
        text = _sub(rule, text)
    return text


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Return the spans in order, overlapping or touching ones joined, empty ones left out."""
    merged: list[tuple[int, int]] = []
    for begin, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and begin <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((begin, end))
    return merged
