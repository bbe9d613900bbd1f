"""A fake model server on loopback (OpenAI and Ollama APIs) that answers like ``sim``.

A test double for tests and benchmarks, kept out of the package. It serves ``POST
/v1/chat/completions`` (and ``GET /v1/models``) and Ollama's ``POST /api/chat`` from a
thread, after a fixed latency, with the simulated model's replies
(:func:`veriscribe.llm.sim.sim_reply`), so the abstract and answer pipelines accept
what it says. A prompt's id and values do not cross
HTTP (no client sends them), so the server finds the prompt file whose wording a request
fits and reads the values off it: the simulated model then answers as in the process.
Structured calls need the schema in the request: Ollama clients send it as ``format``;
run OpenAI clients with ``VERISCRIBE_LLM__OPENAI_SCHEMA=json_schema`` (or
``json_object_schema``), since plain JSON mode carries none.

It takes at most ``max_in_flight`` requests at once and answers HTTP 429 beyond that,
and it can be told to misbehave (``mode``): ``"error"`` answers HTTP 500, ``"close"``
drops the connection without a reply, ``"hang"`` never answers. :meth:`FakeServer.kill`
drops the requests in flight and refuses new connections; :meth:`FakeServer.start`
brings it back on the same port. A server given ``models`` answers HTTP 404 for any
other model name. Counters say what it saw, the ``Authorization``
headers included, so tests can check what a client sent.

Run one by hand: ``python tests/fake_server.py --port 8001 --latency 0.2``.
"""

from __future__ import annotations

import argparse
import json
import re
import string
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from veriscribe.llm.sim import sim_reply
from veriscribe.prompts import Prompt, all_prompts

Mode = Literal["ok", "error", "close", "hang"]
_POLL_S = 0.02


@dataclass
class Stats:
    """What a fake server saw."""

    requests: int = 0
    served: int = 0
    failed: int = 0
    rejected: int = 0
    """Requests beyond ``max_in_flight``, answered HTTP 429."""
    in_flight: int = 0
    peak_in_flight: int = 0
    authorizations: set[str] = field(default_factory=set)
    models: set[str] = field(default_factory=set)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    fake: FakeServer


class FakeServer:
    """An OpenAI-compatible chat server on 127.0.0.1 with set latency and faults."""

    def __init__(
        self,
        *,
        port: int = 0,
        latency: float = 0.0,
        max_in_flight: int = 64,
        mode: Mode = "ok",
        seed: int = 0,
        models: set[str] | None = None,
        echo_auth: bool = False,
    ) -> None:
        self.port = port
        self.latency = latency
        self.max_in_flight = max_in_flight
        self.mode: Mode = mode
        self.seed = seed
        self.models = models
        """The model names it serves (None: any); others get HTTP 404."""
        self.echo_auth = echo_auth
        """Error bodies repeat the request's key, as careless servers do: for tests
        that no key leaks from an error."""
        self.stats = Stats()
        self.lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._alive = False

    @property
    def url(self) -> str:
        """Return the base URL clients use (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def ollama_url(self) -> str:
        """Return the base URL Ollama clients use (``http://127.0.0.1:PORT``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        """Tell whether the server takes requests (not killed or stopped)."""
        return self._alive

    def start(self) -> FakeServer:
        """Listen (again, on the same port after a kill) and serve from a thread."""
        server = _Server(("127.0.0.1", self.port), _Handler)
        server.fake = self
        self.port = int(server.server_address[1])
        self._server = server
        self._alive = True
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def kill(self) -> None:
        """Drop the requests in flight and refuse new connections, as a crash would."""
        self._alive = False
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    stop = kill

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        """Return the chat completion answering a request body."""
        messages = as_rendered([_message(m) for m in body.get("messages", [])])
        content = sim_reply(messages, _schema(body), self.seed)
        prompt_tokens = max(1, sum(len(str(m.content)) for m in messages) // 4)
        output_tokens = max(1, len(content) // 4)
        return {
            "id": f"chatcmpl-fake-{self.stats.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model", "fake")),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": output_tokens,
                "total_tokens": prompt_tokens + output_tokens,
            },
        }


def _message(item: dict[str, Any]) -> BaseMessage:
    content = item.get("content") or ""
    if isinstance(content, list):
        content = "".join(str(part.get("text", "")) for part in content)
    role = item.get("role")
    if role == "system":
        return SystemMessage(str(content))
    if role == "assistant":
        return AIMessage(str(content))
    return HumanMessage(str(content))


def _pattern(template: str) -> re.Pattern[str]:
    """Return a pattern that matches the template's renderings, a group per slot."""
    parts: list[str] = []
    seen: set[str] = set()
    slot_before = False
    for literal, name, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        follows_slot, slot_before = slot_before and not literal, name is not None
        if name is None:
            continue
        if name in seen:
            parts.append(f"(?P={name})")
        elif follows_slot:
            # A slot right after another cannot be told from it: the first takes
            # both (the text renders the same), and no search of every split
            # costs time quadratic in a long article.
            parts.append(f"(?P<{name}>)")
        else:
            parts.append(f"(?P<{name}>.*)")
        seen.add(name)
    return re.compile("".join(parts), re.DOTALL)


@cache
def _patterns() -> list[tuple[Prompt, list[tuple[str, re.Pattern[str]]]]]:
    """Return each prompt with the (message type, pattern) of each of its messages."""
    found = []
    for prompt in all_prompts():
        parts = [("system", _pattern(prompt.system))] if prompt.system else []
        found.append((prompt, [*parts, ("human", _pattern(prompt.user))]))
    return found


def as_rendered(messages: list[BaseMessage]) -> list[BaseMessage]:
    """Return the messages marked with the prompt they were rendered from, if any."""
    for prompt, patterns in _patterns():
        head = messages[: len(patterns)]
        if len(head) < len(patterns):
            continue
        values: dict[str, str] = {}
        for message, (kind, pattern) in zip(head, patterns, strict=True):
            match = pattern.fullmatch(str(message.content))
            if message.type != kind or match is None:
                break
            values.update(match.groupdict())
        else:
            rendered = prompt.render(**values)
            if [m.content for m in rendered] == [m.content for m in head]:
                return [*rendered, *messages[len(patterns) :]]
    return messages


def _schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """Return the JSON schema a request asks its reply to follow, if it names one."""
    if isinstance(body.get("format"), dict):  # Ollama
        return dict(body["format"])
    form = body.get("response_format") or {}
    if form.get("type") == "json_schema":
        schema = (form.get("json_schema") or {}).get("schema")
        return schema if isinstance(schema, dict) else None
    schema = form.get("schema")
    return schema if isinstance(schema, dict) else None


def ollama_chunks(completion: dict[str, Any]) -> list[dict[str, Any]]:
    """Return a chat completion as Ollama's streamed ``/api/chat`` lines."""
    content = completion["choices"][0]["message"]["content"]
    usage = completion["usage"]
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    head = {"model": completion["model"], "created_at": stamp}
    return [
        {**head, "message": {"role": "assistant", "content": content}, "done": False},
        {
            **head,
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": usage["prompt_tokens"],
            "eval_count": usage["completion_tokens"],
        },
    ]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    ollama = False

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Keep quiet: tests and benches read the counters instead."""

    def do_GET(self) -> None:  # noqa: N802
        """Answer ``/v1/models`` with the models seen so far (or ``fake``)."""
        fake = self.server.fake
        names = sorted(fake.stats.models) or ["fake"]
        self._send(200, {"object": "list", "data": [{"id": n} for n in names]})

    def do_POST(self) -> None:  # noqa: N802
        """Answer a chat completion, or fail as the server's mode says."""
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        route = self.path.rstrip("/")
        self.ollama = route.endswith("/api/chat")
        if not (self.ollama or route.endswith("/chat/completions")):
            self._error(404, f"no route {self.path}")
            return
        with fake.lock:
            stats = fake.stats
            stats.requests += 1
            stats.authorizations.add(self.headers.get("Authorization", ""))
            stats.models.add(str(body.get("model", "")))
            if stats.in_flight >= fake.max_in_flight:
                stats.rejected += 1
                busy = True
            else:
                busy = False
                stats.in_flight += 1
                stats.peak_in_flight = max(stats.peak_in_flight, stats.in_flight)
        if busy:
            self._error(429, "too many requests in flight")
            return
        if fake.models is not None and body.get("model") not in fake.models:
            with fake.lock:
                fake.stats.in_flight -= 1
                fake.stats.failed += 1
            self._error(404, f"model {body.get('model')!r} not found")
            return
        try:
            self._answer(fake, body)
        finally:
            with fake.lock:
                fake.stats.in_flight -= 1

    def _answer(self, fake: FakeServer, body: dict[str, Any]) -> None:
        deadline = time.monotonic() + fake.latency
        while time.monotonic() < deadline or (fake.mode == "hang" and fake.alive):
            if not fake.alive:
                break
            time.sleep(min(_POLL_S, max(0.0, deadline - time.monotonic()) or _POLL_S))
        if not fake.alive or fake.mode == "close":
            with fake.lock:
                fake.stats.failed += 1
            self.close_connection = True  # no reply at all: the client sees a drop
            return
        if fake.mode == "error":
            with fake.lock:
                fake.stats.failed += 1
            message = "internal server error"
            if fake.echo_auth:
                token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                message += f" for key {token}"
            self._error(500, message)
            return
        reply = fake.reply(body)
        with fake.lock:
            fake.stats.served += 1
        if self.ollama:
            self._send_lines(ollama_chunks(reply))
        else:
            self._send(200, reply)

    def _error(self, status: int, message: str) -> None:
        # Ollama's errors are a bare string; OpenAI's an object.
        error: object = message if self.ollama else {"message": message}
        self._send(status, {"error": error})

    def _send_lines(self, lines: list[dict[str, Any]]) -> None:
        data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main() -> None:
    """Run one fake server in the foreground until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--max-in-flight", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    server = FakeServer(
        port=args.port,
        latency=args.latency,
        max_in_flight=args.max_in_flight,
        seed=args.seed,
    ).start()
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.kill()


if __name__ == "__main__":
    main()
