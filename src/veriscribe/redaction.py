"""Keep secrets out of every message, log line and stored error.

A server may echo the API key it refused in its error body, a URL or a database DSN
may carry a password, and a library may quote a malformed DSN back, so every text that
leaves veriscribe's hands (error lines, the call log, stored run errors, the error log
and its command line, tracebacks, the endpoints a result names) goes through
:func:`redact`, the one redaction. It hides:

* URL userinfo with a password (``scheme://user:password@``), also percent-encoded,
  whatever the password holds (``/ ? # @``, ``%``, and blanks where no ``/`` follows);
* the value of every secret-like parameter, in a query string (``?api-token=...``,
  Azure's ``?code=...``), a libpq keyword DSN (``password=... host=...``, quoted
  values too), a JSON-ish ``"api_key": "..."`` pair, or percent-encoded
  (``%3Fapi_key%3D...``);
* bearer and basic credentials, OpenAI-style keys, and what libpq quotes back from a
  DSN it cannot parse (a bad percent escape, a bad port, a word missing its ``=``);
* the values of secret-named environment variables and of keys read from variables
  named in configuration (:func:`remember_secret`), raw and percent-encoded;
* the passwords and keys of the databases and servers in use: each setting that names
  one (a DSN or URL in an option, an environment variable or the configuration) is
  parsed whole, the way libpq and the HTTP clients read it (:func:`target_secrets`),
  and its secrets are hidden wherever they appear, in every piece a parser could cut
  them into.
"""

from __future__ import annotations

import functools
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
_SECRET_NAMES = (
    r".*(?:password|passwd|passphrase|secret|api_?key|credential|token(?![a-z])).*"
    r"|(?:.*[-_.])?(?:key|pwd|pass|auth|authorization|signature|sig)(?:[-_.].*)?"
)
_SECRET_NAME_PARTS = re.compile(_SECRET_NAMES, re.IGNORECASE)
# In a query string, Azure Functions' ``code`` (and OAuth's) is a key too; elsewhere
# "code=3" is an exit or status code.
_QUERY_SECRET_NAME = re.compile(rf"code|{_SECRET_NAMES}", re.IGNORECASE)
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
    names: re.Pattern[str] = _SECRET_NAME_PARTS
    """The names whose values are secrets."""


# Every pattern below is linear in the text: names and schemes are taken
# possessively, and a value is only read after a name that says it is a secret.
_BEARER = _Rule(
    # Authorization headers and bearer tokens, wherever a library printed them.
    re.compile(r"(?i)\b(?:bearer|basic)\s+(?P<secret>[A-Za-z0-9._~+/=-]{6,})")
)
_USERINFO = _Rule(
    # Credentials in URLs: scheme://user:password@host. The password is taken to the
    # last '@' before a blank, whatever it holds ('/ ? # @' break the URL for HTTP
    # clients, not for the eye); with no '@' before a blank, libpq's way: to the
    # first '@' before a '/', blanks included. Neither crosses another URL's '//',
    # so each start reads a stretch no other start reads again.
    re.compile(
        r"(?i)(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*+://"
        r"(?P<secret>[^\s/?#@:]*+:(?:(?:(?!//)\S)*(?=@)|[^/\r\n'\"@]*+(?=@)))"
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
    # A secret parameter in a query string: its value ends at '&' or a quote, and
    # takes a '#' and a '%26' in (libpq reads "?password=a#b" as "a#b", "a%26b" as
    # "a&b").
    re.compile(rf"(?i)[?&;]{_NAME}="),
    re.compile(r"[^\s&'\"]+"),
    _QUERY_SECRET_NAME,
)
_ENCODED_QUERY_PARAM = _Rule(
    # The same inside a percent-encoded URL: its value ends at the next '%26'.
    re.compile(rf"(?i)(?:[?&;]|(?<=%26)|(?<=%3[Ff])){_NAME}%3D"),
    re.compile(r"(?:(?!%26)[^\s&'\"])+"),
    _QUERY_SECRET_NAME,
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
_LIBPQ_QUOTE = _Rule(
    # What libpq quotes back from a DSN it cannot parse may be a password or a piece
    # of one: a part with a bad percent escape or a blank, the port it read out of
    # "u:pa/ss@", the word after "password=my" that lacks its '=', the whole URI.
    re.compile(
        r"(?i)(?:(?:percent-encoded (?:token|value)|in URI query parameter"
        r"|in URI(?: \(expected \":\" or \"/\"\))?):"
        r"|missing \"=\" after|invalid integer value|unexpected spaces found in)"
        r" (?P<secret>\"[^\"\n]*\")"
    )
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
    _ENCODED_QUERY_PARAM,
    _KEYWORD_PARAM,
    _QUOTED_PAIR,
    _LIBPQ_QUOTE,
    _OPENAI_KEY,
)
# Keys read from variables named in configuration (an endpoint's ``api_key_env``)
# and passwords of the databases and servers in use, whatever their names.
_remembered: set[str] = set()


def remember_secret(value: str) -> None:
    """Redact ``value`` from every later text, whatever variable it came from."""
    if len(value.strip()) >= _MIN_SECRET_CHARS:
        _remembered.add(value.strip())


def remember_secrets_in(target: str) -> None:
    """Redact the passwords and keys that a URL or DSN carries from every later text.

    A library may quote them back in a form no pattern knows (decoded, or cut out of
    the URL), so their values are hidden wherever they appear. ``target`` is one
    setting, read whole (see :func:`target_secrets`).
    """
    # Known to be passwords: hidden even when short.
    _remembered.update(_setting_secrets(target))


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


# ---------------------------------------------------------------- one whole setting

_SCHEME = re.compile(r"(?i)(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*+://")
# A value in libpq's keyword form starts with "name =".
_KEYWORD_FORM = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*=")
# Where a URL parser may cut a password that holds one of these: libpq ends the
# userinfo at its first '@' (or sees none before a '/'), HTTP clients end the
# authority at '/ ? #' and the userinfo at its last '@', a query ends at '&'.
_CUTS = re.compile(r"[/?#@&:]")
_MAX_CUT_CHARS = 256


def target_secrets(target: str) -> list[str]:
    """Return the secrets of one DSN or URL, read whole as libpq and HTTP clients do.

    ``target`` is one setting (``--db``, ``--base-url``, an environment variable, a
    command-line argument): unlike a message, it is all one value, so a password may
    hold any character, blanks included. Each password comes in every form a parser
    may quote it back in: as written, percent-decoded, and cut at each of the
    characters where libpq or an HTTP client ends it.
    """
    found: set[str] = set()
    for begin, end in _target_spans(target):
        found |= _readings(target[begin:end])
    return sorted(found - {""}, key=len, reverse=True)


def redact_target(target: str) -> str:
    """Return one DSN or URL fit to show: its secrets hidden, read whole.

    Args:
        target: One setting or command-line argument, not a message (see
            :func:`target_secrets`).
    """
    parts: list[str] = []
    done = 0
    for begin, end in _merged(_target_spans(target)):
        parts += [target[done:begin], _hidden(target[begin:end])]
        done = end
    return redact("".join(parts) + target[done:], also=target_secrets(target))


def redact_command(argv: Iterable[str]) -> str:
    """Return a command line fit to log: each argument read whole."""
    shown = []
    for arg in argv:
        # "--db=postgresql://...": the value after the option's name is the setting.
        name, equals, value = arg.partition("=")
        if arg.startswith("--") and equals and " " not in name:
            shown.append(f"{name}={redact_target(value)}")
        else:
            shown.append(redact_target(arg))
    return " ".join(shown)


@functools.lru_cache(maxsize=256)
def _setting_secrets(target: str) -> frozenset[str]:
    """Return the secrets of one setting worth hiding (read once per value)."""
    return frozenset(
        value.strip()
        for value in {*secrets_in(target), *target_secrets(target)}
        if len(value.strip()) >= _MIN_GIVEN_CHARS
    )


def _readings(secret: str) -> set[str]:
    """Return a secret as written, decoded, and in every piece a parser may cut."""
    raw = _unquoted(secret) if secret[:1] == "'" else secret
    # libpq reads a backslash in a keyword value as escaping the next character.
    pieces = {secret, raw, re.sub(r"\\(.)", r"\1", raw)}
    # A password is short: a longer span (hostile, or a whole URL read as one) is
    # hidden as it stands, not in a piece for every character.
    if len(raw) <= _MAX_CUT_CHARS:
        for cut in _CUTS.finditer(raw):
            pieces |= {raw[: cut.start()], raw[cut.end() :]}
    return {form for piece in pieces for form in (piece, unquote(piece))}


def _target_spans(target: str) -> list[tuple[int, int]]:
    """Return where one setting's secrets are: URL passwords, secret parameters."""
    if _KEYWORD_FORM.match(target) and not _SCHEME.search(target):
        return _keyword_spans(target)
    return _url_spans(target)


def _url_spans(target: str) -> list[tuple[int, int]]:
    """Return the URL passwords and secret query values of one setting."""
    spans: list[tuple[int, int]] = []
    # The widest reading of all: the userinfo runs to the value's last '@' (libpq
    # stops at the first, HTTP clients at the last before a '/ ? #'; both are
    # inside this one). Found once, so that many URLs in one value stay linear.
    last_at = target.rfind("@")
    query_from = 0
    for scheme in _SCHEME.finditer(target):
        if scheme.end() > last_at:
            break
        query_from = last_at + 1
        colon = target.find(":", scheme.end(), last_at)
        if colon >= 0:
            # Every later URL's userinfo lies inside this one.
            spans.append((colon + 1, last_at))
            break
    question = target.find("?", query_from)
    if question >= 0:
        spans += _query_spans(target, question + 1)
    return spans


def _query_spans(target: str, at: int) -> list[tuple[int, int]]:
    """Return the secret values of a query string that starts at ``at``."""
    spans: list[tuple[int, int]] = []
    secret = False  # the parameter before was a secret
    for param in re.finditer(r"[^&]+", target[at:]):
        begin, end = at + param.start(), at + param.end()
        name, equals, _ = param.group().partition("=")
        if equals:
            secret = bool(_QUERY_SECRET_NAME.fullmatch(unquote(name).strip()))
            if secret:
                spans.append((begin + len(name) + 1, end))
        elif secret:
            # "?password=a&b": libpq refuses the "b" and quotes it back, but it
            # is the rest of the password.
            spans.append((begin, end))
    return spans


def _keyword_spans(target: str) -> list[tuple[int, int]]:
    """Return the secret values of a libpq keyword DSN, parsed as libpq parses it.

    A name, blanks, '=', blanks, then a value: single-quoted, or up to the next
    blank, a backslash escaping the character after it in both. A word without its
    '=' after a secret's value (an unquoted blank in the password) is more of it.
    """
    spans: list[tuple[int, int]] = []
    size = len(target)
    at = 0
    secret = False
    while at < size:
        if target[at].isspace():
            at += 1
            continue
        name_at = at
        while at < size and target[at] != "=" and not target[at].isspace():
            at += 1
        name = target[name_at:at]
        while at < size and target[at].isspace():
            at += 1
        if at >= size or target[at] != "=":
            if secret:
                spans.append((name_at, name_at + len(name)))
            continue
        at += 1
        while at < size and target[at].isspace():
            at += 1
        value_at = at
        quoted = at < size and target[at] == "'"
        if quoted:
            at += 1
        while at < size and not (target[at] == "'" if quoted else target[at].isspace()):
            at += 2 if target[at] == "\\" else 1
        if quoted:
            at = min(at + 1, size)  # the closing quote (libpq refuses a DSN without)
        secret = bool(_SECRET_NAME_PARTS.fullmatch(name))
        if secret:
            spans.append((value_at, at))
    return spans


def _forms(value: str) -> set[str]:
    """Return a secret as written and as it would appear percent-encoded in a URL."""
    return {value, quote(value, safe=""), quote(value, safe="/:")}


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Return the secret-looking environment values and remembered keys, longest first.

    A variable that holds a DSN or URL (``VERISCRIBE_DB``, ``OPENAI_BASE_URL``) counts
    with the passwords and keys inside it, whatever its name.
    """
    env = os.environ if environ is None else environ
    values = set(_remembered)
    # One pass: reading os.environ decodes every entry, and this runs per message.
    for name, value in env.items():
        if _SECRET_NAME.search(name) and len(value.strip()) >= _MIN_SECRET_CHARS:
            values.add(value.strip())
        if "://" in value or _KEYWORD_FORM.match(value):
            values |= _setting_secrets(value)
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
        elif not rule.names.fullmatch(match.group("name")):
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
