"""What keeps the server safe to run: the bind rule, the bearer token, body and work limits."""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import os
from collections.abc import Iterable
from types import TracebackType
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from veriscribe.errors import ConfigError
from veriscribe.serve.problems import Busy, problem, respond

TOKEN_ENV = "VERISCRIBE_SERVE_TOKEN"
MIN_TOKEN_CHARS = 16
OPEN_PATHS = frozenset({"/healthz", "/readyz", "/"})
"""Probes answer without the token: they tell only whether the server is up. The
web page and its assets hold no data: it asks for the token before calling the API."""
PAGE_PREFIX = "/ui/"
ORIGINS_ENV = "VERISCRIBE_SERVE_ALLOW_ORIGINS"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing: a foreign page may send them but not read the answer."""
DEFAULT_PORTS = {"http": 80, "https": 443}


def is_open(path: str) -> bool:
    """Tell whether ``path`` is answered without the token."""
    return path in OPEN_PATHS or path.startswith(PAGE_PREFIX)


def token_from_env() -> str | None:
    """Return the bearer token clients must send, if one is set."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    return token or None


def is_loopback(host: str) -> bool:
    """Tell whether ``host`` is a loopback address (only this machine can connect)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name may resolve to anything


def check_bind(host: str, token: str | None) -> None:
    """Refuse a non-loopback address without a token, and a token too short to guess.

    Raises:
        ConfigError: The server must not start this way.
    """
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"{TOKEN_ENV} is too short: use at least {MIN_TOKEN_CHARS} random "
            "characters (e.g. `python -c 'import secrets; print(secrets.token_urlsafe())'`)"
        )
    if token is None and not is_loopback(host):
        raise ConfigError(
            f"refusing to listen on {host}, which other machines can reach, without a "
            f"token: set {TOKEN_ENV} (clients then send `Authorization: Bearer TOKEN`), "
            "or listen on 127.0.0.1"
        )


def parse_origin(text: str) -> str:
    """Return a web origin (``scheme://host[:port]``) as browsers send it.

    Raises:
        ConfigError: ``text`` is not an http(s) origin (no path, query or user).
    """
    value = text.strip().rstrip("/")
    how = (
        f"{text!r} is not a web origin: give scheme, host and port, as in "
        "http://localhost:8080"
    )
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        raise ConfigError(how) from None
    if (
        parts.scheme not in DEFAULT_PORTS
        or not parts.hostname
        or parts.path
        or parts.query
        or parts.fragment
        or parts.username is not None
    ):
        raise ConfigError(how)
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is None or port == DEFAULT_PORTS[parts.scheme]:
        return f"{parts.scheme}://{host}"
    return f"{parts.scheme}://{host}:{port}"


def host_name(host_header: str) -> str:
    """Return the host of a ``Host`` header, without its port."""
    if host_header.startswith("["):
        return host_header[1 : host_header.find("]")]
    return host_header.rpartition(":")[0] if ":" in host_header else host_header


class OriginGuard:
    """On loopback, answer only this machine's own names and its own pages.

    A page on another site can make a browser send a form to a loopback server (no
    preflight for a multipart form), and a site whose name it turns to 127.0.0.1 (DNS
    rebinding) can read the answers: so a request must name a loopback host in
    ``Host``, and one that changes something must come from the server's own origin
    (or one allowed with ``--allow-origin``). Clients that are not browsers send no
    ``Origin`` and are let through.
    """

    def __init__(
        self, app: ASGIApp, *, host: str, allow_origins: Iterable[str]
    ) -> None:
        self.app = app
        self.active = is_loopback(host)
        self.allowed = frozenset(parse_origin(origin) for origin in allow_origins)
        self.allowed_hosts = frozenset(
            origin.partition("://")[2] for origin in self.allowed
        )

    def _own_host(self, host_header: str) -> bool:
        name = host_header.lower()
        return is_loopback(host_name(name)) or name in self.allowed_hosts

    def _own_origin(self, origin: str, scheme: str, host_header: str) -> bool:
        try:
            given = parse_origin(origin)
        except ConfigError:
            return False  # "null" (a sandboxed or local page) or anything malformed
        if given in self.allowed:
            return True
        try:
            return given == parse_origin(f"{scheme}://{host_header}")
        except ConfigError:
            return False

    def refusal(self, scope: Scope) -> str | None:
        """Return why the request is refused, or None to let it through."""
        headers = Headers(scope=scope)
        host_header = headers.get("host")
        if host_header is not None and not self._own_host(host_header):
            return (
                f"the Host header names {host_header!r}: a server on loopback answers "
                "only to localhost, 127.0.0.1 and [::1]; to reach it under another "
                "name, start it with --allow-origin http://NAME:PORT "
                f"(or {ORIGINS_ENV})"
            )
        if scope["method"] in SAFE_METHODS:
            return None
        origin = headers.get("origin")
        if origin is None:
            # Browsers send Origin on every POST; Sec-Fetch-Site backs that up.
            if headers.get("sec-fetch-site") not in ("cross-site", "same-site"):
                return None
            page, allow = "another site", "URL"
        elif self._own_origin(
            origin, scope.get("scheme", "http"), host_header or "localhost"
        ):
            return None
        else:
            page, allow = repr(origin), origin
        return (
            f"a page on {page} may not send requests that change something: this "
            "server takes them only from its own pages; to allow that page, start "
            f"the server with --allow-origin {allow} (or {ORIGINS_ENV})"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a foreign host or a cross-origin change with a 403 problem."""
        if scope["type"] == "http" and self.active:
            reason = self.refusal(scope)
            if reason is not None:
                body = problem(403, reason, kind="foreign-origin")
                await respond(body)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class BearerAuth:
    """Answer 401 to any request (probes aside) without the server's bearer token."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token.encode("utf-8") if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Let the request through if it carries the token (or none is set)."""
        if scope["type"] == "http" and self.token and not is_open(scope["path"]):
            scheme, _, given = (
                Headers(scope=scope).get("authorization", "").partition(" ")
            )
            # Compared in constant time, so the answer's timing tells nothing of it.
            good = scheme.lower() == "bearer" and hmac.compare_digest(
                given.strip().encode("utf-8"), self.token
            )
            if not good:
                detail = "send the server's token as `Authorization: Bearer TOKEN`"
                body = problem(401, detail, kind="unauthorized")
                response = respond(body, {"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class BodyLimit:
    """Answer 413 to a request body larger than the input limit (``--max-bytes``)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _too_large(self) -> str:
        return (
            f"the request body is larger than {self.max_bytes} bytes "
            "(the server's --max-bytes, VERISCRIBE_MAX_INPUT_BYTES)"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a declared length over the limit; count the bytes of any other."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None:
            if not declared.isdigit():
                body = problem(400, "the Content-Length header is not a number")
                await respond(body)(scope, receive, send)
                return
            if int(declared) > self.max_bytes:
                body = problem(413, self._too_large(), kind="too-large")
                await respond(body)(scope, receive, send)
                return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    # Raised inside the request's handling: answered as a 413 problem.
                    raise HTTPException(413, self._too_large())
            return message

        await self.app(scope, limited, send)


class Ticket:
    """One admitted job: a place in the queue, then a slot while it runs."""

    def __init__(self, gate: WorkGate) -> None:
        self.gate = gate
        self.released = False

    async def __aenter__(self) -> Ticket:
        try:
            await self.gate.slots.acquire()
        except BaseException:  # cancelled while queued: the place is free again
            self.release()
            raise
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.gate.slots.release()
        self.release()

    def release(self) -> None:
        """Give the job's place back (once, however often called)."""
        if not self.released:
            self.released = True
            self.gate.admitted -= 1


class WorkGate:
    """Run at most ``slots`` jobs of model work at once, and queue ``queue`` more.

    A job beyond those is refused at once (``Busy``: 429 with Retry-After) rather than
    left waiting where the client cannot tell how long it will be.
    """

    def __init__(self, what: str, slots: int, queue: int, retry_after: int) -> None:
        self.what = what
        self.limit = slots + queue
        self.slots = asyncio.Semaphore(slots)
        self.retry_after = retry_after
        self.admitted = 0

    def ticket(self) -> Ticket:
        """Admit one job, or raise ``Busy`` when as many as allowed are in."""
        if self.admitted >= self.limit:
            raise Busy(self.what, self.retry_after)
        self.admitted += 1
        return Ticket(self)
