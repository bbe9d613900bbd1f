"""The exceptions veriscribe raises, each saying whether a retry could help.

``VeriscribeError`` is the root; the CLI prints its ``user_message`` in one line and exits
with code 1. The message is redacted when the error is made (it may quote a URL, a DSN
or a server's reply), so wherever it goes next (a line, a log, a stored failure) it
carries no secret. Anything else escaping to the CLI is a bug: one line says so and names the
log file that holds the traceback (``--debug`` prints it).
"""

from __future__ import annotations

from pydantic import ValidationError

from veriscribe.redaction import redact


class VeriscribeError(Exception):
    """A failure the user can act on."""

    retryable: bool = False

    def __init__(self, user_message: str, *, retryable: bool | None = None) -> None:
        user_message = redact(user_message)
        super().__init__(user_message)
        self.user_message = user_message
        if retryable is not None:
            self.retryable = retryable


class ConfigError(VeriscribeError):
    """Settings or a model SPEC that cannot work."""


class DatabaseUnavailable(ConfigError):
    """The database cannot be reached, or its setting does not parse.

    Its message names the database (redacted), for the operator; the HTTP API answers
    only "database unavailable", since the probes are open to anyone.
    """


class ModelFileMissing(ConfigError):
    """The GGUF file for the embedded backend does not exist or is not a GGUF file."""


class BackendUnavailable(VeriscribeError):
    """A model server could not be reached or answered with a server error.

    After the client's last attempt the error is no longer retryable and carries how
    many attempts were made and how long they took in all.
    """

    retryable = True

    def __init__(
        self,
        user_message: str,
        *,
        retryable: bool | None = None,
        attempts: int = 1,
        seconds: float = 0.0,
    ) -> None:
        super().__init__(user_message, retryable=retryable)
        self.attempts = attempts
        self.seconds = seconds


class ModelTimeout(BackendUnavailable):
    """A model call took longer than the configured timeout."""


class ContextOverflow(VeriscribeError):
    """A prompt would not fit the model's context window; it was not sent."""

    def __init__(self, user_message: str, *, prompt_tokens: int, budget: int) -> None:
        super().__init__(user_message)
        self.prompt_tokens = prompt_tokens
        self.budget = budget


class StructuredOutputError(VeriscribeError):
    """The model's output did not parse into the expected schema, even after repair."""

    def __init__(self, user_message: str, *, raw: str = "") -> None:
        super().__init__(user_message)
        self.raw = raw


class ConstraintError(StructuredOutputError):
    """A reply's schema could not become a grammar the backend accepts; nothing was sent.

    Handled wherever an unusable reply is (a recorded failure, never a crash), and not
    worth retrying: the same schema makes the same grammar.
    """


class InputError(VeriscribeError):
    """An input document that cannot be read: malformed, empty or of an unknown kind."""


class NotFound(VeriscribeError):
    """A run, corpus or document that does not exist."""


RETRYABLE_ERRORS: tuple[type[BaseException], ...] = (BackendUnavailable,)


def first_problem(exc: ValidationError, root: str) -> str:
    """Return a validation error's first problem as ``where: what``, on one line."""
    problem = exc.errors()[0]
    where = ".".join(str(part) for part in problem["loc"]) or root
    return f"{where}: {problem['msg']}"
