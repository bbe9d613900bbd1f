"""The one way veriscribe calls a model: budget, cache, timeout, JSON repair, call log."""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, Protocol, TypeVar

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatResult
from pydantic import BaseModel

from veriscribe.errors import (
    BackendUnavailable,
    ModelTimeout,
    StructuredOutputError,
    VeriscribeError,
)
from veriscribe.llm.budget import TokenCounter, check_budget
from veriscribe.llm.deadline import backoff, call_timeout
from veriscribe.llm.gate import CallGate
from veriscribe.llm.pool import EndpointPool, Lease
from veriscribe.llm.slotted import SlottedChat
from veriscribe.llm.spec import ModelSpec
from veriscribe.llm.structured import (
    ParseFailure,
    json_schema,
    loads_lenient,
    parse_model,
)
from veriscribe.redaction import redact
from veriscribe.release import code_digest
from veriscribe.results import Usage
from veriscribe.settings import LLMSettings
from veriscribe.store import calls
from veriscribe.store.calls import CachedResponse, cache_key
from veriscribe.store.db import Store

T = TypeVar("T", bound=BaseModel)
V = TypeVar("V")

# Which run and graph thread a call belongs to, for the call log.
call_scope: contextvars.ContextVar[tuple[str | None, str | None]] = (
    contextvars.ContextVar("call_scope", default=(None, None))
)


@dataclass
class Completion(Generic[V]):
    """The result of one logical model call (its repair attempt included)."""

    value: V
    raw: str
    usage: Usage
    seconds: float
    repaired: bool = False
    attempts: int = 1
    """Attempts at the model call(s) behind the value, retries included (a cached
    reply counts as one)."""


Messages = str | Sequence[BaseMessage]
JsonKwargs = Callable[[dict[str, Any]], dict[str, Any]]


class CallObserver(Protocol):
    """Hears of every attempt at a model call: when it goes out and how it ends."""

    def call_started(self) -> None:
        """Note an attempt that goes out to the model."""

    def call_ended(self, reply: BaseMessage | None) -> None:
        """Note an attempt that ended: its reply, or None when it failed."""


@dataclass
class _Sending:
    """One attempt under way: its time limit, and when and where it went out."""

    limit_s: float
    start: float | None = None
    endpoint: str = ""

    def seconds(self) -> float:
        """Return the seconds since the request went out (0 if it never did)."""
        return 0.0 if self.start is None else time.perf_counter() - self.start


# The attempt that this task's request belongs to (set by ``LLM._attempt``).
_sending: contextvars.ContextVar[_Sending] = contextvars.ContextVar("sending")


def _server_failed(exc: Exception, llm: LLM, route: Route) -> bool:
    """Whether a failed request counts against its server (a timeout, or retryable)."""
    if isinstance(exc, (TimeoutError, ModelTimeout)):
        return True
    return classify_backend_error(exc, llm.label, route.endpoint).retryable


@dataclass
class Route:
    """Where one attempt goes: a chat model, the server's name, and its pool lease."""

    chat: BaseChatModel
    endpoint: str
    lease: Lease[BaseChatModel] | None = None


def as_messages(prompt: Messages, system: str | None = None) -> list[BaseMessage]:
    """Return the prompt as a message list (a string becomes one user message)."""
    messages: list[BaseMessage] = [SystemMessage(system)] if system else []
    if isinstance(prompt, str):
        messages.append(HumanMessage(prompt))
    else:
        messages.extend(prompt)
    return messages


@dataclass
class LLM:
    """A chat model with veriscribe's guarantees around every call."""

    spec: ModelSpec
    chat: BaseChatModel
    settings: LLMSettings
    count_tokens: TokenCounter
    json_kwargs: JsonKwargs
    limit_kwargs: Callable[[int], dict[str, Any]]
    context_tokens: int
    store: Store | None = None
    endpoint: str = ""
    model_name: str = ""
    calls_made: int = 0
    scores_choices: bool = False
    """The backend reads one-word answers' probabilities (``choice_probs``) directly."""
    constrains: bool = True
    """The backend constrains decoding to the JSON schema it is given."""
    guards_copying: bool = False
    """The backend can stop word-for-word runs of a source (``copy_guard``)."""
    pool: EndpointPool[BaseChatModel] | None = None
    """Several servers of this model: each attempt goes to one of them (``chat`` is
    then the first one's, and ``endpoint`` lists them all)."""
    identity_parts: tuple[str, ...] = ()
    """What else tells this model's replies apart: the model file's size, the simulated
    model's options, the models a pool's servers serve."""
    observers: list[CallObserver] = field(default_factory=list, repr=False)
    """Told of every attempt sent to a server (see ``add_observer``)."""
    _gate: CallGate | None = field(default=None, repr=False)
    _sender: SlottedChat | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        """Return the model identifier that goes into results."""
        return f"{self.spec.backend}:{self.model_name or self.spec.name}"

    @property
    def identity(self) -> str:
        """Return everything about the model that changes its replies, as one string.

        Thread and cache keys hold it: another model, model file, sampling setting or
        simulated seed makes new threads and new calls, never a reused reply. The
        servers of one endpoint or pool are not part of it (any of them serves the
        same model); the models they serve are.
        """
        cfg = self.settings
        parts = [
            self.label,
            *self.identity_parts,
            f"temperature={cfg.temperature}",
            f"context={self.context_tokens}",
            f"output={cfg.max_output_tokens}",
        ]
        if self.spec.backend == "openai":
            parts.append(f"schema={cfg.openai_schema}")
        if self.spec.backend == "local" and cfg.lookup:
            parts.append("lookup")  # other replies (see ``LLMSettings.lookup``)
        if self.spec.backend == "local" and cfg.batched:
            parts.append("batched")  # so are these (``LLMSettings.batched``)
        return "|".join(parts)

    def add_observer(self, observer: CallObserver) -> None:
        """Tell ``observer`` of every attempt at a model call from now on.

        Only attempts sent to a server are told of, on any server of a pool; a reply
        found in the cache is not a call.
        """
        self.observers.append(observer)

    def remove_observer(self, observer: CallObserver) -> None:
        """Stop telling ``observer`` of calls."""
        self.observers.remove(observer)

    def prompt_budget(self, max_output: int | None = None) -> int:
        """Return how many prompt tokens fit beside ``max_output`` reserved tokens."""
        return self.context_tokens - (max_output or self.settings.max_output_tokens)

    def _slots(self) -> CallGate:
        if self._gate is None:
            self._gate = CallGate(self.settings.concurrency)
        return self._gate

    @asynccontextmanager
    async def _route(self) -> AsyncIterator[Route]:
        """Hold a slot for one attempt: this process's, or a pooled server's."""
        if self.pool is None:
            async with self._slots():
                yield Route(self.chat, self.endpoint)
            return
        async with self.pool.lease() as lease:
            yield Route(lease.member.client, lease.member.name, lease)

    async def text(
        self, prompt_id: str, prompt: Messages, *, max_tokens: int | None = None
    ) -> Completion[str]:
        """Call the model for free text."""
        messages = as_messages(prompt)
        raw, usage, seconds, attempts = await self._call(
            prompt_id, messages, max_tokens, None
        )
        return Completion(raw, raw, usage, seconds, attempts=attempts)

    async def json(
        self,
        prompt_id: str,
        prompt: Messages,
        schema: type[T],
        *,
        max_tokens: int | None = None,
        constraint: dict[str, Any] | None = None,
        salt: str = "",
        copy_guard: tuple[str, int] | tuple[str, int, str] | None = None,
    ) -> Completion[T]:
        """Call the model for a JSON object, validated into ``schema``.

        Backends that can constrain decoding get the schema, or ``constraint`` when
        given (a narrower JSON schema of the same shape, e.g. with enums of allowed
        values); the output is parsed leniently, and if it still does not validate the
        model is asked once to repair it. A second failure raises StructuredOutputError.
        ``salt`` makes otherwise identical calls distinct (independent samples).
        ``copy_guard`` (source text, words[, vocabulary text]): on a backend that can
        (the embedded model), decoding may not continue a word-for-word run of the
        source beyond that many words, nor garble a word where it is stopped; the
        words, spellings and scripts it may use are the vocabulary text's (by default
        the source's). Other backends ignore it.
        """
        messages = as_messages(prompt)
        schema_json = constraint if constraint is not None else json_schema(schema)
        extra = None
        if copy_guard is not None and copy_guard[1] > 0 and self.guards_copying:
            spec: dict[str, Any] = {"source": copy_guard[0], "limit": copy_guard[1]}
            if len(copy_guard) > 2:
                spec["words"] = copy_guard[2]
            extra = {"copy_guard": spec}
        raw, usage, seconds, attempts = await self._call(
            prompt_id, messages, max_tokens, schema_json, salt=salt, extra=extra
        )
        try:
            return Completion(
                parse_model(raw, schema), raw, usage, seconds, attempts=attempts
            )
        except ParseFailure as first:
            repair = [
                *messages,
                AIMessage(raw or "(empty)"),
                HumanMessage(
                    f"That reply was not usable: {first.reason}. Reply again with only "
                    "the corrected JSON object, with every required field."
                ),
            ]
            raw2, usage2, seconds2, attempts2 = await self._call(
                f"{prompt_id}+repair",
                repair,
                max_tokens,
                schema_json,
                salt=salt,
                extra=extra,
            )
            usage, seconds = usage + usage2, seconds + seconds2
            attempts += attempts2
            try:
                value = parse_model(raw2, schema)
            except ParseFailure as second:
                raise StructuredOutputError(
                    f"{prompt_id}: no valid {schema.__name__} after one repair "
                    f"({second.reason})",
                    raw=raw2,
                ) from second
            await self._cache_put(
                prompt_id,
                messages,
                max_tokens,
                schema_json,
                raw2,
                usage2,
                self._key(messages, max_tokens, schema_json, extra=extra, salt=salt),
            )
            return Completion(
                value, raw2, usage, seconds, repaired=True, attempts=attempts
            )

    async def choice_probs(
        self,
        prompt_id: str,
        prompt: Messages,
        choices: Sequence[str],
        *,
        samples: int = 3,
    ) -> Completion[dict[str, float]]:
        """Return the model's probability of each one-word answer to a prompt.

        Backends that expose next-token probabilities (the embedded model) are read
        directly in one call; the others answer ``samples`` times under a schema that
        admits only the choices, and the shares of the answers are the probabilities.
        """
        messages = as_messages(prompt)
        if self.scores_choices:
            raw, usage, seconds, attempts = await self._call(
                prompt_id, messages, 1, None, extra={"choice_probs": list(choices)}
            )
            try:
                probs = {c: float(loads_lenient(raw).get(c, 0.0)) for c in choices}
            except (ParseFailure, AttributeError, TypeError, ValueError) as exc:
                raise StructuredOutputError(
                    f"{prompt_id}: unreadable choice probabilities", raw=raw
                ) from exc
            return Completion(probs, raw, usage, seconds, attempts=attempts)
        constraint = {
            "type": "object",
            "properties": {"answer": {"type": "string", "enum": list(choices)}},
            "required": ["answer"],
        }
        counts = dict.fromkeys(choices, 0)
        usage, seconds, raws = Usage(), 0.0, []
        for sample in range(1, samples + 1):
            reply = await self.json(
                prompt_id,
                messages,
                _OneWord,
                max_tokens=12,
                constraint=constraint,
                salt=f"sample {sample}",
            )
            usage, seconds = usage + reply.usage, seconds + reply.seconds
            raws.append(reply.raw)
            answer = reply.value.answer.strip().lower()
            if answer in counts:
                counts[answer] += 1
        total = sum(counts.values())
        if not total:
            raise StructuredOutputError(
                f"{prompt_id}: no answer among {', '.join(choices)}", raw=raws[-1]
            )
        probs = {c: counts[c] / total for c in choices}
        return Completion(probs, "\n".join(raws), usage, seconds)

    def _key(
        self,
        messages: list[BaseMessage],
        max_tokens: int | None,
        schema: dict[str, Any] | None,
        *,
        extra: dict[str, Any] | None = None,
        salt: str = "",
    ) -> str:
        more = [p for p in (extra, salt) if p]
        return cache_key(
            *more,
            self.identity,
            # The decoding code (samplers, grammars, the copy guard) shapes a reply
            # as much as the prompt: a changed one asks again.
            code_digest("llm"),
            # The servers of a pool are declared to serve one model: a reply is as
            # good from any of them, and a run resumed with one server fewer (or
            # more) still finds its finished calls.
            "pool" if self.pool is not None else self.endpoint,
            [(m.type, str(m.content)) for m in messages],
            schema,
            self.settings.temperature,
            max_tokens or self.settings.max_output_tokens,
        )

    def _caching(self) -> bool:
        # `sim` is cached only on request: benchmarks and fault tests want every call
        # to reach it; a resumable batch wants no finished call repeated.
        return (
            self.store is not None
            and self.settings.cache
            and (self.spec.backend != "sim" or self.settings.cache_sim)
        )

    async def _cache_put(
        self,
        prompt_id: str,
        messages: list[BaseMessage],
        max_tokens: int | None,
        schema: dict[str, Any] | None,
        raw: str,
        usage: Usage,
        key: str = "",
    ) -> None:
        if self.store is not None and self._caching():
            await calls.cache_put(
                self.store,
                key or self._key(messages, max_tokens, schema),
                CachedResponse(raw, usage.prompt_tokens, usage.output_tokens),
            )

    async def _call(
        self,
        prompt_id: str,
        messages: list[BaseMessage],
        max_tokens: int | None,
        schema: dict[str, Any] | None,
        *,
        extra: dict[str, Any] | None = None,
        salt: str = "",
    ) -> tuple[str, Usage, float, int]:
        """Make one logical call (retried while it fails transiently).

        Returns:
            The reply text, its usage, its seconds and the attempts it took.

        Raises:
            BackendUnavailable: The last attempt failed too (no longer retryable; the
                message says how many attempts were made and how long they took).
            VeriscribeError: A failure no retry can help.
        """
        max_out = max_tokens or self.settings.max_output_tokens
        prompt_tokens = self.count_tokens(messages)
        check_budget(prompt_tokens, max_out, self.context_tokens, prompt_id)
        use_cache = self._caching()
        key = (
            self._key(messages, max_tokens, schema, extra=extra, salt=salt)
            if use_cache
            else ""
        )
        if use_cache and self.store is not None:
            hit = await self._cached(self.store, prompt_id, key)
            if hit is not None:
                return hit
        kwargs = self.limit_kwargs(max_out)
        if schema is not None:
            kwargs.update(self.json_kwargs(schema))
        kwargs.update(extra or {})
        timeout = call_timeout(self.settings, self.spec.backend, prompt_tokens, max_out)
        (reply, seconds, served_by), attempt = await self._retried(
            partial(self._attempt, prompt_id, messages, kwargs, prompt_tokens, timeout)
        )
        raw = str(reply.content)
        meta = getattr(reply, "usage_metadata", None) or {}
        usage = Usage(
            calls=1,
            prompt_tokens=int(meta.get("input_tokens") or prompt_tokens),
            output_tokens=int(meta.get("output_tokens") or 0),
        )
        if self.store is not None:
            cached = use_cache and (schema is None or _parses(raw, schema))
            await self._record(
                self.store,
                prompt_id,
                raw,
                usage,
                seconds,
                served_by,
                key=key if cached else None,
            )
        return raw, usage, seconds, attempt

    async def _cached(
        self, store: Store, prompt_id: str, key: str
    ) -> tuple[str, Usage, float, int] | None:
        """Return the cached reply under ``key``, logged as a cached call, if any."""
        hit = await calls.cache_get(store, key)
        if hit is None:
            return None
        await self._log(prompt_id, hit.prompt_tokens, hit.output_tokens, 0.0, "cached")
        return hit.content, Usage(cached_calls=1), 0.0, 1

    async def _retried(self, attempt_once: Callable[[], Awaitable[V]]) -> tuple[V, int]:
        """Repeat an attempt while it fails transiently; return it and the attempts.

        Raises:
            BackendUnavailable: The last attempt failed too, or its failure is not
                worth repeating.
        """
        attempts = self.settings.retries + 1
        first_start = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            try:
                return await attempt_once(), attempt
            except BackendUnavailable as error:
                # A timeout of the embedded backend is not worth repeating: its
                # worker thread is still busy with the abandoned call.
                hopeless = self.spec.backend == "local" and isinstance(
                    error, ModelTimeout
                )
                if attempt >= attempts or hopeless or not error.retryable:
                    raise gave_up(
                        error, attempt, time.perf_counter() - first_start
                    ) from error
                if self.pool is None:
                    # A pool needs no pause: the failed server is cooling down and
                    # the next attempt goes to another, or waits for one.
                    await asyncio.sleep(backoff(attempt))

    async def _record(
        self,
        store: Store,
        prompt_id: str,
        raw: str,
        usage: Usage,
        seconds: float,
        served_by: str,
        *,
        key: str | None,
    ) -> None:
        """Log an answered call, and cache its reply under ``key`` unless None."""
        cached = (
            None
            if key is None
            else (key, CachedResponse(raw, usage.prompt_tokens, usage.output_tokens))
        )
        fields = self._log_fields(
            prompt_id,
            usage.prompt_tokens,
            usage.output_tokens,
            seconds,
            "ok",
            endpoint=served_by,
        )
        # One trip to the database for the log row and the cached reply.
        await calls.log_answered_call(store, fields, cached)

    async def _attempt(
        self,
        prompt_id: str,
        messages: list[BaseMessage],
        kwargs: dict[str, Any],
        prompt_tokens: int,
        limit_s: float,
    ) -> tuple[BaseMessage, float, str]:
        """Make one attempt at a call; log and classify its failure.

        Returns:
            The reply, its seconds and the server that answered.
        """
        sending = _Sending(limit_s)
        token = _sending.set(sending)
        try:
            reply = await self._slotted().ainvoke(messages, **kwargs)
        except (TimeoutError, ModelTimeout) as exc:
            await self._log(
                prompt_id,
                prompt_tokens,
                0,
                sending.seconds(),
                "timeout",
                endpoint=sending.endpoint,
            )
            where = f" at {sending.endpoint}" if sending.endpoint else ""
            raise ModelTimeout(
                f"{self.label}{where} did not answer {prompt_id!r} within "
                f"{seconds_text(limit_s)} s (if the server is only slow, lower "
                "VERISCRIBE_LLM__MIN_OUTPUT_TOKENS_PER_S or raise "
                "VERISCRIBE_LLM__TIMEOUT_S)"
            ) from exc
        except Exception as exc:
            error = classify_backend_error(exc, self.label, sending.endpoint)
            await self._log(
                prompt_id,
                prompt_tokens,
                0,
                sending.seconds(),
                "unavailable" if error.retryable else "error",
                error.user_message,
                endpoint=sending.endpoint,
            )
            raise error from exc
        finally:
            _sending.reset(token)
        return reply, sending.seconds(), sending.endpoint

    def _slotted(self) -> SlottedChat:
        if self._sender is None:
            self._sender = SlottedChat(send=self._send)
        return self._sender

    async def _send(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        run_manager: AsyncCallbackManagerForLLMRun | None,
        kwargs: dict[str, Any],
    ) -> ChatResult:
        """Send one attempt's request in a slot, freed as soon as the reply is in.

        Tells the observers when the request goes out and how it ends, and a pool
        how its server did.
        """
        sending = _sending.get()
        async with self._route() as route:
            # The clock starts once the call may go out: waiting for a free slot
            # behind this process's own calls is not the server's fault.
            sending.start = time.perf_counter()
            sending.endpoint = route.endpoint
            self.calls_made += 1
            for observer in self.observers:
                observer.call_started()
            reply: BaseMessage | None = None
            try:
                async with asyncio.timeout(sending.limit_s):
                    result = await route.chat._agenerate(
                        messages, stop=stop, run_manager=run_manager, **kwargs
                    )
                reply = result.generations[0].message if result.generations else None
            except Exception as exc:
                if route.lease is not None and _server_failed(exc, self, route):
                    route.lease.failed()
                raise
            finally:
                for observer in self.observers:
                    observer.call_ended(reply)
            if route.lease is not None:
                route.lease.succeeded()
        return result

    async def _log(
        self,
        prompt_id: str,
        prompt_tokens: int,
        output_tokens: int,
        latency: float,
        outcome: str,
        detail: str | None = None,
        *,
        endpoint: str = "",
    ) -> None:
        if self.store is None:
            return
        fields = self._log_fields(
            prompt_id,
            prompt_tokens,
            output_tokens,
            latency,
            outcome,
            detail,
            endpoint=endpoint,
        )
        await calls.log_call(self.store, **fields)

    def _log_fields(
        self,
        prompt_id: str,
        prompt_tokens: int,
        output_tokens: int,
        latency: float,
        outcome: str,
        detail: str | None = None,
        *,
        endpoint: str = "",
    ) -> dict[str, Any]:
        """Return the call log row of one attempt, in the current call scope."""
        run_id, thread_id = call_scope.get()
        return {
            "backend": self.spec.backend,
            "model": self.model_name or self.spec.name,
            "prompt_id": prompt_id,
            "prompt_tokens": prompt_tokens,
            "output_tokens": output_tokens,
            "latency_s": latency,
            "outcome": outcome,
            "detail": None if detail is None else redact(detail),
            "run_id": run_id,
            "thread_id": thread_id,
            "endpoint": redact(endpoint) if endpoint else None,
        }


class _OneWord(BaseModel):
    """A one-word answer sampled under a schema that admits only the choices."""

    answer: str


def _parses(raw: str, schema: dict[str, Any]) -> bool:
    """Tell whether raw text is JSON at all (only such replies are worth caching)."""
    try:
        loads_lenient(raw)
    except ParseFailure:
        return False
    return True


def seconds_text(seconds: float) -> str:
    """Return a duration for a message: tenths below ten seconds, else whole seconds."""
    return f"{seconds:.1f}" if seconds < 10 else f"{seconds:.0f}"


def _causes(exc: BaseException) -> list[BaseException]:
    """Return the exception and what caused it (libraries wrap httpx errors)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def classify_backend_error(
    exc: Exception, label: str, endpoint: str
) -> VeriscribeError:
    """Map a backend library's exception to a VeriscribeError saying if a retry helps.

    The message never carries a secret: a server may echo the key it refused.
    """
    if isinstance(exc, VeriscribeError):
        return exc
    where = f" at {endpoint}" if endpoint else ""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    if status is None:
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", None)
    text = redact(str(exc).strip().splitlines()[0] if str(exc).strip() else name)
    if len(text) > 300:
        text = text[:300] + "..."
    if isinstance(status, int):
        if status >= 500 or status == 429:
            return BackendUnavailable(
                f"{label}{where} answered HTTP {status}: {text} (the server is "
                "failing or overloaded: try again later, or with a lower --concurrency)"
            )
        if status == 404:
            return VeriscribeError(
                f"{label}{where} does not have this model (HTTP 404): {text}"
            )
        if status in (401, 403):
            return VeriscribeError(
                f"{label}{where} refused the credentials (HTTP {status}): {text} "
                "(check OPENAI_API_KEY and the server URL)"
            )
        return VeriscribeError(
            f"{label}{where} refused the request (HTTP {status}): {text}"
        )
    names = " ".join(type(e).__name__ for e in _causes(exc)).lower()
    if "connecttimeout" in names:
        return BackendUnavailable(
            f"cannot reach {label}{where}: it did not accept a connection in time "
            "(is the server running and the address right?)"
        )
    connection_words = ("connect", "connection", "refused", "unreachable", "resolve")
    if isinstance(exc, ConnectionError | OSError) or any(
        w in (names + " " + text).lower() for w in connection_words
    ):
        return BackendUnavailable(
            f"cannot reach {label}{where}: {text} (is the server running?)"
        )
    if "timeout" in (names + " " + text).lower():
        return ModelTimeout(f"{label}{where} timed out: {text}")
    return VeriscribeError(f"{label}{where} failed: {name}: {text}")


def gave_up(
    error: BackendUnavailable, attempts: int, seconds: float
) -> VeriscribeError:
    """Return a call's final error: the last failure, and how long it was tried."""
    tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    message = redact(
        f"{error.user_message}; gave up after {tries} in {seconds_text(seconds)} s"
    )
    kind = ModelTimeout if isinstance(error, ModelTimeout) else BackendUnavailable
    # Not retryable any more: the attempts are spent, and a retry by the graph would
    # multiply the time before the user hears of it.
    return kind(message, retryable=False, attempts=attempts, seconds=seconds)
