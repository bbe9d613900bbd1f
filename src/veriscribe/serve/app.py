"""The ASGI application: the product's services over JSON and server-sent events."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi import FastAPI, File, Form, Request, UploadFile
from fastapi import Path as PathParam
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sse_starlette import EventSourceResponse
from starlette.background import BackgroundTask

from veriscribe import __version__, service
from veriscribe.errors import ConfigError, NotFound, VeriscribeError
from veriscribe.events import STAGE_EVENT, OnStage, StageEvent
from veriscribe.llm.factory import check_embedded_runtime
from veriscribe.llm.spec import parse_spec
from veriscribe.options import AbstractOptions
from veriscribe.redaction import redact
from veriscribe.results import (
    BatchLine,
    CheckedAnswer,
    CorpusDetails,
    CorpusListing,
    FailedLine,
    IngestReport,
    RunSummary,
    SectionText,
)
from veriscribe.serve import problems
from veriscribe.serve.guard import (
    BearerAuth,
    BodyLimit,
    OriginGuard,
    Ticket,
    WorkGate,
    parse_origin,
)
from veriscribe.serve.models import (
    MAX_KEY_CHARS,
    MAX_NAME_CHARS,
    NAME_PATTERN,
    AbstractRequest,
    AnswerRequest,
    Health,
    Readiness,
    RunAccepted,
    VerifyRequest,
)
from veriscribe.serve.page import add_page
from veriscribe.settings import Settings, default_data_dir
from veriscribe.store.db import sqlite_path

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)

WORKER_NAME = re.compile(r'"worker":"[^"]*:\d+:(?P<tag>[0-9a-f]+)"')
"""A worker's name as runs record it, ``host:pid:tag``, in a result's JSON."""

CorpusName = Annotated[str, PathParam(pattern=NAME_PATTERN, max_length=MAX_NAME_CHARS)]
RunId = Annotated[str, PathParam(max_length=MAX_KEY_CHARS)]

EVENT_STREAM = "text/event-stream"
RUN_PREFIX = "api-"
"""Names the abstract runs started through the API (resumed when the server starts)."""
PROGRESS_FIELDS = ("status", "total", "pending", "running", "done", "failed")


@dataclass(frozen=True)
class ServeConfig:
    """How the server runs: its settings, token, limits and where uploads go."""

    settings: Settings
    token: str | None = None
    work_slots: int = 2
    """Answers, checks and ingests running at once."""
    queue: int = 8
    """More admitted to wait for a slot; beyond them, 429."""
    runs: int = 2
    """Abstract runs working in the background at once; beyond them, 429."""
    timeout_s: float = 600.0
    """Longest an answer, a check or an ingest may take (504 after)."""
    retry_after_s: int = 5
    poll_s: float = 1.0
    """How often a run's event stream looks at its progress."""
    resume_runs: bool = True
    """At start, continue the abstract runs of this API that no process finished."""
    drain_s: float = 25.0
    """At shutdown, how long answers in flight and the articles being written may take
    to finish; what is left then continues from its checkpoint at the next start."""
    work_dir: Path | None = None
    """Uploaded files and run outputs; default: ``serve`` beside a SQLite database,
    else in the data directory."""
    host: str = "127.0.0.1"
    """The address the server listens on: on loopback, it answers only its own names
    and takes changes only from its own pages."""
    allow_origins: tuple[str, ...] = ()
    """Web origins (``scheme://host:port``) whose pages may call the API too."""

    @property
    def files(self) -> Path:
        """Return the directory that holds uploads and run outputs."""
        if self.work_dir is not None:
            return self.work_dir
        db = str(self.settings.db)
        if "://" in db or db.endswith(":memory:"):
            return default_data_dir() / "serve"
        return sqlite_path(db).parent / "serve"


@dataclass
class ChatLock:
    """One chat's turns, one at a time: two at once would write over each other."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


@dataclass
class Server:
    """What the application's handlers share."""

    config: ServeConfig
    gate: WorkGate
    run_gate: WorkGate
    runs: dict[str, asyncio.Task[Any]] = field(default_factory=dict)
    chats: dict[str, ChatLock] = field(default_factory=dict)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the server drains: runs start no new article, requests are refused."""
    warm: service.WarmIndexes = field(default_factory=service.WarmIndexes)
    """The corpora's indexes, built by a first question and kept for the next ones."""

    @property
    def settings(self) -> Settings:
        """Return the settings every service runs with."""
        return self.config.settings

    def hide_paths(self, text: str) -> str:
        """Return ``text`` with the server's upload directories cut from its paths."""
        files = self.config.files
        for root in dict.fromkeys((str(files.resolve()), str(files))):
            text = re.sub(re.escape(root) + r"/(?:[^/\s\"']+/)*", "", text)
        return text

    def for_client(self, result: R) -> R:
        """Return a result without the server's paths or its processes' names.

        A client sees an uploaded file by its name; where the server keeps it, the
        machine's name and its process ids are nothing the client needs.
        """
        text = self.hide_paths(result.model_dump_json())
        text = WORKER_NAME.sub(r'"worker":"worker-\g<tag>"', text)
        return type(result).model_validate_json(text)

    def admit(self, gate: WorkGate) -> Ticket:
        """Admit one job through ``gate``, unless the server is draining.

        Raises:
            Draining: The server is shutting down.
            Busy: As much work is admitted as the gate takes.
        """
        if self.stopping.is_set():
            raise problems.Draining(self.config.retry_after_s)
        return gate.ticket()

    def drain(self) -> None:
        """Take no new work and let the abstract runs finish their articles in flight."""
        if not self.stopping.is_set():
            log.info(
                "draining: %d abstract run(s) finish what is in flight", len(self.runs)
            )
        self.stopping.set()

    async def finish_runs(self) -> None:
        """Drain, wait for the runs to stop, and cancel those that take too long.

        A run that stops leaves its unstarted articles pending; one cancelled continues
        its articles from their checkpoints (``runs resume``, ``worker`` or the next
        start of the server): nothing is lost either way.
        """
        self.drain()
        tasks = list(self.runs.values())
        if not tasks:
            return
        _, late = await asyncio.wait(tasks, timeout=self.config.drain_s)
        for task in late:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def start_run(
        self,
        run_id: str,
        ticket: Ticket,
        work: Callable[[], Awaitable[object]],
    ) -> None:
        """Work on an abstract run in the background, holding ``ticket`` until done."""

        async def background() -> None:
            try:
                await work()
            except Exception as exc:  # the run's record keeps its state
                failure, _ = problems.problem_of(exc)
                log.warning("abstract run %s stopped: %s", run_id, failure.detail)
            finally:
                ticket.release()
                self.runs.pop(run_id, None)

        self.runs[run_id] = asyncio.create_task(background())

    async def continue_run(self, run_id: str, *, local: bool) -> object:
        """Resume a run from its inputs (``local``), else work on it as a worker."""
        if local:
            return await service.resume_run(
                self.settings, run_id, handle_signals=False, stop=self.stopping
            )
        return await service.work_run(
            self.settings, run_id, handle_signals=False, stop=self.stopping
        )

    async def resume_runs(self) -> list[str]:
        """Continue the runs this API started that no process finished.

        A run whose uploads are on this machine is resumed from them; one started
        elsewhere is worked on from the articles in the database, as ``worker`` does.
        """
        resumed = []
        for run in await service.list_runs(self.settings):
            if not run.run_id.startswith(RUN_PREFIX) or run.status == "finished":
                continue
            if run.status == "running" or run.run_id in self.runs:
                continue  # a live worker has it
            try:
                ticket = self.admit(self.run_gate)
            except (problems.Busy, problems.Draining):
                log.warning("abstract run %s left for later: too many runs", run.run_id)
                continue
            inputs = run.inputs or []
            local = bool(inputs) and await asyncio.to_thread(all_exist, inputs)
            work = partial(self.continue_run, run.run_id, local=local)
            self.start_run(run.run_id, ticket, work)
            resumed.append(run.run_id)
        return resumed


def stage_data(event: StageEvent) -> str:
    """Return the JSON of a stage event, its text redacted as every message's is."""
    fields = event.model_dump(mode="json")
    return json.dumps({key: _redacted(value) for key, value in fields.items()})


def _redacted(value: object) -> object:
    """Return a JSON value with each string in it redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    return value


async def off_the_loop(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run async work on an event loop of its own, in a thread.

    Checking an answer's claims is pages of text work between few awaits: on the
    server's loop it would hold up every other request (the probes too) meanwhile.
    Cancelled (a timeout, a client gone), the work is cancelled at its next await,
    and this returns only once the thread is done, so a slot is never given back to
    work still running.
    """
    loop = asyncio.new_event_loop()
    # Created before the loop runs anywhere: nothing else touches the loop yet.
    task = loop.create_task(work())

    def run() -> T:
        try:
            return loop.run_until_complete(task)
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()

    done = asyncio.ensure_future(asyncio.to_thread(run))
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        loop.call_soon_threadsafe(task.cancel)
        await asyncio.gather(done, return_exceptions=True)
        raise


def all_exist(paths: list[str]) -> bool:
    """Tell whether every one of the paths exists on this machine."""
    return all(Path(path).exists() for path in paths)


UPLOAD_NAME_CHARS = 120
"""Longest name an uploaded file is stored under (its extension kept)."""
SUFFIX_CHARS = 16


def safe_name(filename: str | None, fallback: str) -> str:
    """Return an uploaded file's name with no directory and no unusual character.

    A name too long is cut before its extension, which says how the file is read.
    """
    name = Path(filename or "").name
    name = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".")
    if len(name) > UPLOAD_NAME_CHARS:
        stem, dot, suffix = name.rpartition(".")
        if dot and stem and len(suffix) < SUFFIX_CHARS:
            name = f"{stem[: UPLOAD_NAME_CHARS - len(suffix) - 1]}.{suffix}"
        else:
            name = name[:UPLOAD_NAME_CHARS]
    return name or fallback


def store_bytes(path: Path, data: bytes) -> None:
    """Write ``path`` whole, so a reader never sees a file half written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial_path = path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial")
    try:
        partial_path.write_bytes(data)
        os.replace(partial_path, path)
    finally:
        partial_path.unlink(missing_ok=True)


async def save_uploads(files: list[UploadFile], folder: Path) -> list[Path]:
    """Write uploaded files to disk, each in a directory named by its content.

    Two uploads of one name but different contents (in one request or in two at once)
    are stored apart, and neither replaces the other; the same file uploaded twice
    is stored once.
    """
    saved = []
    for number, upload in enumerate(files, 1):
        data = await upload.read()
        digest = hashlib.sha256(data).hexdigest()[:16]
        path = folder / digest / safe_name(upload.filename, f"upload-{number}.txt")
        await asyncio.to_thread(store_bytes, path, data)
        saved.append(path)
    return saved


def create_app(config: ServeConfig) -> FastAPI:
    """Return the application serving the product's services with ``config``."""
    server = Server(
        config=config,
        gate=WorkGate(
            "model work", config.work_slots, config.queue, config.retry_after_s
        ),
        run_gate=WorkGate("abstract runs", config.runs, 0, config.retry_after_s),
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if config.resume_runs:
            await server.resume_runs()
        yield
        await server.finish_runs()

    app = FastAPI(
        title="veriscribe",
        version=__version__,
        summary="Guideline answers and abstracts that a reader can check.",
        lifespan=lifespan,
        # The interactive pages load scripts from a CDN; the schema is served alone.
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.server = server
    problems.install(app, scrub=server.hide_paths)
    app.add_middleware(BodyLimit, max_bytes=config.settings.max_input_bytes)
    app.add_middleware(BearerAuth, token=config.token)
    # Outermost: a foreign Host or page is refused before anything else is looked at.
    app.add_middleware(
        OriginGuard, host=config.host, allow_origins=config.allow_origins
    )
    if config.allow_origins:
        # Pages on the allowed origins may read answers and send JSON (preflights).
        app.add_middleware(
            CORSMiddleware,
            allow_origins=[parse_origin(origin) for origin in config.allow_origins],
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Accept"],
        )
    add_routes(app, server)
    add_page(app)
    add_schema(
        app,
        "StageEvent",
        STAGE_EVENT.json_schema(ref_template=SCHEMA_REF, mode="serialization"),
    )
    return app


SCHEMA_REF = "#/components/schemas/{model}"
STAGE_EVENT_REF = SCHEMA_REF.format(model="StageEvent")
"""The schema of a `stage` event's data, named in the streaming responses."""


def add_schema(app: FastAPI, name: str, schema: dict[str, Any]) -> None:
    """Add a schema no route returns as JSON (an event's data) to the OpenAPI document.

    ``schema`` is a JSON schema whose references point at ``SCHEMA_REF``: its
    definitions become components beside it.
    """
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = generate()
            components = document.setdefault("components", {})
            schemas = components.setdefault("schemas", {})
            definitions = dict(schema)
            for key, value in {
                **definitions.pop("$defs", {}),
                name: definitions,
            }.items():
                if schemas.setdefault(key, value) != value:
                    raise ValueError(f"two schemas named {key} in the API")
        return app.openapi_schema or generate()

    app.openapi = openapi  # type: ignore[method-assign]


ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": problems.Problem, "description": description}
    for status, description in {
        400: "Bad JSON or bad input",
        401: "Missing or wrong bearer token",
        404: "Unknown corpus or run",
        413: "Body larger than the input limit",
        422: "Invalid request",
        429: "Too much work in progress (see Retry-After)",
        503: "Model backend or database unavailable, or the server shutting down",
    }.items()
}


def add_routes(app: FastAPI, server: Server) -> None:
    """Add the API's endpoints to ``app``."""
    _add_probes(app, server)
    _add_answer_routes(app, server)
    _add_corpus_routes(app, server)
    _add_abstract_routes(app, server)
    _add_run_routes(app, server)


async def _within_limits(
    server: Server, ticket: Ticket, work: Callable[[], Awaitable[T]]
) -> T:
    """Do admitted work once it has a slot, for at most the server's timeout."""
    # The work starts only once it has a slot, and has timeout_s from then on.
    async with ticket, asyncio.timeout(server.config.timeout_s):
        return await work()


async def _answer(
    server: Server, body: AnswerRequest, on_stage: OnStage | None
) -> CheckedAnswer:
    """Answer a question alone, or as the next turn of its chat session."""
    settings = server.settings
    options = body.options()
    if body.session is None:
        return await service.ask(
            settings,
            body.corpus,
            body.question,
            options=options,
            on_stage=on_stage,
            warm=server.warm,
        )
    # Two turns of one chat at once would write over each other's history.
    key = f"{body.corpus}:{body.session}"
    chat_lock = server.chats.setdefault(key, ChatLock())
    chat_lock.users += 1
    try:
        async with (
            chat_lock.lock,
            service.ChatSession.open(
                settings,
                body.corpus,
                session_id=body.session,
                options=options,
                warm=server.warm,
            ) as chat,
        ):
            return await chat.ask(body.question, on_stage=on_stage)
    finally:
        chat_lock.users -= 1
        if not chat_lock.users:
            server.chats.pop(key, None)


async def _answer_events(
    server: Server, body: AnswerRequest, ticket: Ticket
) -> AsyncIterator[dict[str, str]]:
    """Stream an answer's stages as events, then the answer (or its problem)."""
    events: asyncio.Queue[dict[str, str] | None] = asyncio.Queue()

    def on_stage(event: StageEvent) -> None:
        events.put_nowait({"event": "stage", "data": stage_data(event)})

    task = asyncio.create_task(
        _within_limits(server, ticket, partial(_answer, server, body, on_stage))
    )
    task.add_done_callback(lambda _: events.put_nowait(None))
    try:
        while (event := await events.get()) is not None:
            yield event
        try:
            result = task.result()
        except Exception as exc:  # sent to the client as its last event
            failure, _ = problems.problem_of(exc)
            yield {"event": "error", "data": failure.model_dump_json()}
            return
        yield {"event": "answer", "data": result.model_dump_json()}
    finally:
        if not task.done():
            task.cancel()  # the client left: the thread keeps its checkpoint
            await asyncio.gather(task, return_exceptions=True)
        ticket.release()


def _add_probes(app: FastAPI, server: Server) -> None:
    """Add the liveness and readiness probes."""
    settings = server.settings

    @app.get("/healthz", tags=["probes"])
    async def healthz() -> Health:
        """Tell that the server is up."""
        return Health(version=__version__)

    @app.get(
        "/readyz",
        tags=["probes"],
        response_model=Readiness,
        responses={503: ERRORS[503]},
    )
    async def readyz() -> Any:
        """Tell whether the database answers and the model SPEC is usable."""
        spec = parse_spec(settings.model)
        if spec.backend == "local":
            try:
                # Without the ``local`` extra every request that needs the model
                # fails: the server is not ready, and says what to install.
                await asyncio.to_thread(check_embedded_runtime)
            except ConfigError as exc:
                return problems.respond(
                    problems.problem(503, exc.user_message, kind="not-ready")
                )
        try:
            async with asyncio.timeout(10), service.open_store(settings) as store:
                await store.fetchone("SELECT 1")
        except Exception as exc:  # whatever the driver raised: not ready
            # The probe is open to anyone: the database's name, host and port, and
            # what the driver said, go to the server's log alone (redacted there).
            reason = exc.user_message if isinstance(exc, VeriscribeError) else str(exc)
            log.warning("not ready: %s", reason or type(exc).__name__)
            body = problems.problem(
                503, problems.DATABASE_UNAVAILABLE, kind="not-ready"
            )
            return problems.respond(body)
        return Readiness(database="ok", model=str(spec))


def _add_answer_routes(app: FastAPI, server: Server) -> None:
    """Add the endpoints that answer questions and check answers."""
    settings = server.settings

    @app.post(
        "/v1/answers",
        response_model=CheckedAnswer,
        tags=["answers"],
        responses={
            200: {
                "description": "The checked answer (the JSON of `ask --json`); with "
                "`Accept: text/event-stream`, a `stage` event after each step of the "
                "graph, its data a [StageEvent](#schema-stageevent) keyed by `stage`, "
                "and a last `answer` event, its data the checked answer (or `error`, "
                "problem details).",
                "content": {EVENT_STREAM: {"schema": {"$ref": STAGE_EVENT_REF}}},
            },
            **ERRORS,
        },
    )
    async def post_answer(body: AnswerRequest, request: Request) -> Any:
        """Answer a question from a corpus with checked verbatim citations."""
        ticket = server.admit(server.gate)
        if EVENT_STREAM in request.headers.get("accept", ""):
            # At shutdown, an answer in flight has drain_s to finish its stream.
            return EventSourceResponse(
                _answer_events(server, body, ticket),
                background=BackgroundTask(ticket.release),
                shutdown_grace_period=server.config.drain_s,
            )
        return await _within_limits(
            server, ticket, partial(_answer, server, body, None)
        )

    @app.post("/v1/verify", tags=["answers"], responses=ERRORS)
    async def post_verify(body: VerifyRequest) -> CheckedAnswer:
        """Check an answer that carries citation markers, as `verify` does."""
        ticket = server.admit(server.gate)
        check = partial(
            service.verify_answer,
            body.answer,
            corpus=body.corpus,
            question=body.question,
            k=body.window,
            judge=body.judge,
            all_claims=body.all_claims,
            judge_method=body.judge_method,
            read_set=body.read_set,
            settings=settings,
        )
        return await _within_limits(server, ticket, partial(off_the_loop, check))


def _add_corpus_routes(app: FastAPI, server: Server) -> None:
    """Add the endpoints that list, show and fill guideline corpora."""
    settings = server.settings

    @app.get("/v1/corpora", tags=["corpora"], responses=ERRORS)
    async def get_corpora() -> list[CorpusListing]:
        """List corpora with their sizes."""
        return await service.list_corpora(settings)

    @app.get("/v1/corpora/{name}", tags=["corpora"], responses=ERRORS)
    async def get_corpus(
        name: CorpusName,
    ) -> CorpusDetails:
        """Show a corpus's documents and sections."""
        return server.for_client(await service.show_corpus(settings, name))

    @app.get(
        "/v1/corpora/{name}/sections/{key:path}", tags=["corpora"], responses=ERRORS
    )
    async def get_section(
        name: CorpusName,
        key: Annotated[
            str,
            PathParam(
                max_length=MAX_KEY_CHARS,
                description="The section's `doc:section` key.",
            ),
        ],
    ) -> SectionText:
        """Show one section with its text: where a citation's quote can be read."""
        return await service.section_text(settings, name, key)

    @app.post("/v1/corpora/{name}/documents", tags=["corpora"], responses=ERRORS)
    async def post_documents(
        name: CorpusName,
        files: Annotated[list[UploadFile], File(description="Guideline documents.")],
    ) -> IngestReport:
        """Add guideline documents to a corpus (created if new), as `corpus add`."""
        ticket = server.admit(server.gate)
        folder = server.config.files / "corpora" / name
        try:
            paths = await save_uploads(files, folder)
        except BaseException:
            ticket.release()
            raise
        # Files are named by their names alone: where the server keeps them is its own.
        work = partial(
            service.add_corpus, settings, name, paths, shown=lambda path: path.name
        )
        return server.for_client(await _within_limits(server, ticket, work))


def _add_abstract_routes(app: FastAPI, server: Server) -> None:
    """Add the endpoint that starts abstract runs over uploaded articles."""
    settings = server.settings

    @app.post(
        "/v1/abstracts",
        status_code=202,
        response_model=RunAccepted,
        tags=["abstracts"],
        responses=ERRORS,
    )
    async def post_abstracts(
        files: Annotated[
            list[UploadFile],
            File(description="Articles: JATS XML, JSON lines, text or Markdown."),
        ],
        form: Annotated[AbstractRequest, Form()],
    ) -> JSONResponse:
        """Start an abstract run over uploaded articles; its id comes back at once.

        The run lives in the same store as `batch` (`runs show`, `worker` and `runs
        resume` see it); uploading the same articles with the same options names the
        same run.
        """
        options = form.options()
        run_id = await _upload_run_id(files, options, settings.model)
        accepted = RunAccepted(
            run_id=run_id,
            status="running",
            articles=[],
            location=f"/v1/runs/{run_id}",
        )
        # The store first: a run whose task is still winding down is finished.
        if await _run_status(settings, run_id) == "finished":
            accepted.status = "finished"  # nothing to do: its results are in
            return JSONResponse(accepted.model_dump(), status_code=202)
        if run_id in server.runs:
            return JSONResponse(accepted.model_dump(), status_code=202)
        paths = await _start_upload_run(server, files, options, run_id)
        accepted.status = "started"
        accepted.articles = [path.name for path in paths]
        return JSONResponse(accepted.model_dump(), status_code=202)


async def _upload_run_id(
    files: list[UploadFile], options: AbstractOptions, model: str
) -> str:
    """Return the run id that uploads of these articles with these options name."""
    contents = [await upload.read() for upload in files]
    for upload in files:
        await upload.seek(0)
    digests = sorted(hashlib.sha256(data).hexdigest() for data in contents)
    blob = json.dumps([digests, options.model_dump(), model], sort_keys=True)
    return RUN_PREFIX + hashlib.sha256(blob.encode()).hexdigest()[:12]


async def _start_upload_run(
    server: Server, files: list[UploadFile], options: AbstractOptions, run_id: str
) -> list[Path]:
    """Save the uploaded articles, register their run and start it in the background.

    Returns:
        The saved articles' paths.
    """
    settings = server.settings
    ticket = server.admit(server.run_gate)
    try:
        paths = await save_uploads(files, server.config.files / "articles")
        inputs = [str(path) for path in paths]
        out = server.config.files / "runs" / f"{run_id}.jsonl"
        await asyncio.to_thread(out.parent.mkdir, parents=True, exist_ok=True)
        await service.register_run(settings, inputs, out, options, run_id=run_id)
    except BaseException:
        ticket.release()
        raise

    server.start_run(
        run_id,
        ticket,
        lambda: service.run_batch(
            settings,
            inputs,
            out,
            options,
            run_id=run_id,
            handle_signals=False,
            stop=server.stopping,
        ),
    )
    return paths


async def _run_status(settings: Settings, run_id: str) -> str | None:
    """Return a run's status in the store, or None if it has no record."""
    try:
        return (await service.show_run(settings, run_id)).status
    except NotFound:
        return None


def _add_run_routes(app: FastAPI, server: Server) -> None:
    """Add the endpoints that show abstract runs, their results and their progress."""
    settings = server.settings

    @app.get("/v1/runs/{run_id}", tags=["abstracts"], responses=ERRORS)
    async def get_run(run_id: RunId) -> RunSummary:
        """Show a run: counts, timings, tokens, and every failure with its reason."""
        return server.for_client(await service.show_run(settings, run_id))

    @app.get("/v1/runs/{run_id}/results", tags=["abstracts"], responses=ERRORS)
    async def get_run_results(run_id: RunId) -> list[BatchLine | FailedLine]:
        """List the abstracts (and failures) of a run's finished articles, in order."""
        results = await service.run_results(settings, run_id)
        return [server.for_client(result) for result in results]

    @app.get(
        "/v1/runs/{run_id}/events",
        tags=["abstracts"],
        response_class=EventSourceResponse,
        responses={
            200: {
                "description": "A `progress` event whenever the run's counts change, "
                "and a last `run` event with its summary once no process works on it.",
                "content": {EVENT_STREAM: {"schema": {"type": "string"}}},
            },
            **ERRORS,
        },
    )
    async def get_run_events(run_id: RunId) -> EventSourceResponse:
        """Stream a run's progress until it is finished or nothing works on it."""
        first = await service.show_run(settings, run_id)
        return EventSourceResponse(_run_events(server, run_id, first))


async def _run_events(
    server: Server, run_id: str, summary: RunSummary
) -> AsyncIterator[dict[str, str]]:
    """Yield a run's progress whenever it changes, and its summary once it ends."""
    last: dict[str, Any] = {}
    while True:
        progress = {name: getattr(summary, name) for name in PROGRESS_FIELDS}
        if progress != last:
            yield {"event": "progress", "data": json.dumps(progress)}
            last = progress
        idle = summary.status != "running" and run_id not in server.runs
        if summary.status == "finished" or idle:
            shown = server.for_client(summary)
            yield {"event": "run", "data": shown.model_dump_json()}
            return
        await asyncio.sleep(server.config.poll_s)
        summary = await service.show_run(server.settings, run_id)
