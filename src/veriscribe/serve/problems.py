"""Errors as JSON problem details (RFC 9457): a status, a title and one redacted line.

No traceback and no secret ever reaches a client: every detail goes through
:func:`veriscribe.redaction.redact`, and an unexpected error says only that it happened
(the server's log holds the traceback).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from http import HTTPStatus

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from veriscribe.errors import (
    BackendUnavailable,
    ConfigError,
    ContextOverflow,
    DatabaseUnavailable,
    InputError,
    NotFound,
    StructuredOutputError,
    VeriscribeError,
)
from veriscribe.redaction import redact

log = logging.getLogger(__name__)

PROBLEM_TYPE = "application/problem+json"
RETRY_BACKEND_S = 30
DATABASE_UNAVAILABLE = "database unavailable"
"""All a client is told of a database that fails: the server's log holds the rest."""


class Problem(BaseModel):
    """What went wrong with a request (RFC 9457 problem details)."""

    type: str = Field(description="A URI naming the kind of problem.")
    title: str = Field(description="The kind of problem, in a few words.")
    status: int = Field(description="The HTTP status code.")
    detail: str = Field(description="What went wrong with this request, in one line.")


class Busy(Exception):
    """The server has as much model work admitted as it takes; try again later."""

    def __init__(self, what: str, retry_after: int) -> None:
        super().__init__(what)
        self.what = what
        self.retry_after = retry_after


class Draining(Exception):
    """The server is shutting down: it finishes what it has and takes nothing new."""

    def __init__(self, retry_after: int) -> None:
        super().__init__("the server is shutting down")
        self.retry_after = retry_after


def problem(
    status: int, detail: str, *, kind: str | None = None, title: str | None = None
) -> Problem:
    """Return the problem details of one failure, its detail redacted."""
    phrase = HTTPStatus(status).phrase
    slug = kind or phrase.lower().replace(" ", "-").replace("'", "")
    return Problem(
        type=f"urn:veriscribe:problem:{slug}",
        title=title or phrase,
        status=status,
        detail=redact(detail),
    )


def respond(body: Problem, headers: dict[str, str] | None = None) -> JSONResponse:
    """Return problem details as an ``application/problem+json`` response."""
    return JSONResponse(
        body.model_dump(),
        status_code=body.status,
        media_type=PROBLEM_TYPE,
        headers=headers,
    )


def problem_of(exc: BaseException) -> tuple[Problem, dict[str, str]]:
    """Return the problem details and extra headers an exception is answered with."""
    if isinstance(exc, Busy):
        detail = f"too much work in progress ({exc.what}); try again later"
        return problem(429, detail, kind="busy"), {"Retry-After": str(exc.retry_after)}
    if isinstance(exc, Draining):
        detail = "the server is shutting down; try again in a moment"
        return problem(503, detail, kind="draining"), {
            "Retry-After": str(exc.retry_after)
        }
    if isinstance(exc, TimeoutError):
        return problem(504, "the request took longer than the server allows"), {}
    if isinstance(exc, VeriscribeError):
        return _veriscribe_problem(exc)
    log.error("unexpected error answering a request", exc_info=exc)
    detail = "an unexpected error occurred; the server's log holds the details"
    return problem(500, detail), {}


def _veriscribe_problem(exc: VeriscribeError) -> tuple[Problem, dict[str, str]]:
    message = exc.user_message
    if isinstance(exc, NotFound):
        return problem(404, message), {}
    if isinstance(exc, BackendUnavailable):
        body = problem(503, message, kind="backend-unavailable")
        return body, {"Retry-After": str(RETRY_BACKEND_S)}
    if isinstance(exc, DatabaseUnavailable):
        # Its message names the server, port and database: for the operator only.
        log.warning("%s", message)
        return problem(503, DATABASE_UNAVAILABLE, kind="database-unavailable"), {
            "Retry-After": str(RETRY_BACKEND_S)
        }
    if isinstance(exc, ConfigError):
        # The model and the database are the server's own: nothing the client can fix.
        return problem(503, message, kind="server-config"), {}
    if isinstance(exc, ContextOverflow):
        return problem(422, message, kind="context-overflow"), {}
    if isinstance(exc, StructuredOutputError):
        return problem(502, message, kind="model-output"), {}
    if isinstance(exc, InputError):
        return problem(400, message, kind="bad-input"), {}
    return problem(400, message), {}


def validation_problem(exc: RequestValidationError) -> Problem:
    """Return a request that did not validate as a 400 (not JSON) or a 422."""
    errors = list(exc.errors())
    first = errors[0] if errors else {}
    if first.get("type") == "json_invalid":
        context = first.get("ctx") or {}
        reason = context.get("error", "not valid JSON")
        return problem(400, f"the body is not valid JSON: {reason}", kind="bad-json")
    where = ".".join(str(part) for part in first.get("loc", ()) if part != "body")
    message = first.get("msg", "invalid request")
    detail = f"{where}: {message}" if where else message
    more = len(errors) - 1
    if more > 0:
        detail += f" (and {more} more problem{'s' if more > 1 else ''})"
    return problem(422, detail, kind="invalid-request")


def install(app: FastAPI, scrub: Callable[[str], str] = str) -> None:
    """Answer every error of ``app`` with problem details, ``scrub`` run on each."""

    def answer(body: Problem, headers: dict[str, str] | None = None) -> JSONResponse:
        body.detail = scrub(body.detail)
        return respond(body, headers)

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return answer(validation_problem(exc))

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        detail = (
            exc.detail
            if isinstance(exc.detail, str)
            else HTTPStatus(exc.status_code).phrase
        )
        return answer(problem(exc.status_code, detail), dict(exc.headers or {}))

    async def on_error(request: Request, exc: Exception) -> JSONResponse:
        body, headers = problem_of(exc)
        return answer(body, headers)

    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(HTTPException, on_http)
    for kind in (VeriscribeError, Busy, Draining, TimeoutError, Exception):
        app.add_exception_handler(kind, on_error)
