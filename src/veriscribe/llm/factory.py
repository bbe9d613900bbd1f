"""Build an ``LLM`` from a model SPEC: the one place that knows the backends."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from veriscribe.errors import ConfigError, ModelFileMissing
from veriscribe.llm.budget import estimate_tokens
from veriscribe.llm.bundled import (
    BUNDLED_MODELS,
    bundled_model,
    bundled_model_path,
    shipped_size,
)
from veriscribe.llm.client import LLM
from veriscribe.llm.endpoints import Endpoint, checked_url, resolve_endpoints
from veriscribe.llm.pool import EndpointPool, Member
from veriscribe.llm.spec import ModelSpec, parse_spec
from veriscribe.redaction import redact, remember_secrets_in
from veriscribe.settings import LLMSettings, Settings, default_data_dir
from veriscribe.store.db import Store

if TYPE_CHECKING:
    import httpx
    from langchain_core.language_models.chat_models import BaseChatModel

DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"

INSTALL_LOCAL = "pip install 'veriscribe[local]'"
"""How to install the embedded model's runtime (and its default model)."""


def ollama_host() -> str:
    """Return the Ollama base URL from OLLAMA_HOST (scheme and port filled in)."""
    host = os.environ.get("OLLAMA_HOST", "").strip() or DEFAULT_OLLAMA_HOST
    if "://" not in host:
        host = f"http://{host}"
    if host.count(":") < 2:
        host = f"{host}:11434"
    return host.rstrip("/")


def shown_url(url: str) -> str:
    """Return a server URL as results, messages and the call log show it.

    Its password and keys are hidden, here and in every later text.
    """
    remember_secrets_in(url)
    return redact(url)


def http_timeout(cfg: LLMSettings) -> httpx.Timeout:
    """Return the HTTP timeouts of server backends.

    Connecting has its own short limit, so a server that is down or unreachable is
    reported in seconds; the read limit is only the cap, since the client's per-call
    timeout (scaled to the call's budget) runs out first.
    """
    import httpx  # only server backends need it

    return httpx.Timeout(cfg.timeout_s, connect=cfg.connect_timeout_s)


def local_model_path(settings: Settings, name: str = "") -> Path:
    """Return the GGUF file the `local` backend loads for the SPEC ``local[:name]``.

    ``name`` is a bundled model (``1.5b``, ``0.5b``) or a GGUF file; the plain ``local``
    loads ``VERISCRIBE_LOCAL_MODEL`` when it is set, else the default bundled model.
    """
    bundled = bundled_model(name)
    if bundled is None:
        path = Path(name).expanduser()
        if not path.is_file():
            known = ", ".join(f"local:{key}" for key in BUNDLED_MODELS)
            raise ModelFileMissing(
                f"model file not found: {path} (named by the SPEC local:{name}; "
                f"bundled models: local, {known})"
            )
        return path
    if not name and settings.local_model is not None:
        path = settings.local_model.expanduser()
        if not path.is_file():
            raise ModelFileMissing(
                f"model file not found: {path} (set by VERISCRIBE_LOCAL_MODEL)"
            )
        return path
    return bundled_model_path(default_data_dir() / "models", bundled)


def openai_schema_kwargs(form: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Return how an OpenAI-compatible request carries a JSON schema in ``form``."""

    def kwargs(schema: dict[str, Any]) -> dict[str, Any]:
        if form == "json_object_schema":
            return {"response_format": {"type": "json_object", "schema": schema}}
        if form == "json_schema":
            return {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "reply", "schema": schema, "strict": False},
                }
            }
        return {"response_format": {"type": "json_object"}}

    return kwargs


def ollama_chat(
    model: str, host: str, cfg: LLMSettings, api_key: str | None = None
) -> BaseChatModel:
    """Return a chat model of one Ollama server."""
    from langchain_ollama import ChatOllama

    client_kwargs: dict[str, Any] = {"timeout": http_timeout(cfg)}
    if api_key:
        # An Ollama behind an authenticating proxy.
        client_kwargs["headers"] = {"Authorization": f"Bearer {api_key}"}
    return ChatOllama(
        model=model,
        base_url=host,
        num_ctx=cfg.context_tokens,
        num_predict=cfg.max_output_tokens,
        temperature=cfg.temperature,
        client_kwargs=client_kwargs,
    )


def openai_chat(
    model: str, base_url: str | None, cfg: LLMSettings, api_key: str | None
) -> BaseChatModel:
    """Return a chat model of one OpenAI-compatible server."""
    chat_class: type[BaseChatModel]
    try:
        from veriscribe.llm.openai_chat import ServerChat

        chat_class = ServerChat
    except ImportError:
        # It leans on helpers langchain-openai keeps private: if a release drops
        # them, the stock client serves (a little more CPU per call, same requests).
        from langchain_openai import ChatOpenAI

        chat_class = ChatOpenAI
    return chat_class(
        model=model,
        base_url=base_url,
        api_key=api_key or "none",
        temperature=cfg.temperature,
        timeout=http_timeout(cfg),
        max_retries=0,
    )


def endpoint_chat(endpoint: Endpoint, cfg: LLMSettings) -> BaseChatModel:
    """Return a chat model of one configured endpoint."""
    if endpoint.kind == "ollama":
        return ollama_chat(endpoint.model, endpoint.url, cfg, endpoint.api_key())
    return openai_chat(endpoint.model, endpoint.url, cfg, endpoint.api_key())


def make_llm(
    spec: str | ModelSpec, settings: Settings, store: Store | None = None
) -> LLM:
    """Return an LLM for ``spec`` configured by ``settings``."""
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    endpoints = resolve_endpoints(parsed, settings)
    if endpoints:
        return endpoints_llm(parsed, endpoints, settings, store)
    if parsed.backend == "local":
        return _local_llm(parsed, settings, store)
    if parsed.backend == "ollama":
        return _ollama_llm(parsed, settings.llm, store)
    if parsed.backend == "openai":
        return _openai_llm(parsed, settings, store)
    return _sim_llm(parsed, settings.llm, store)


def check_embedded_runtime() -> None:
    """Load llama.cpp, which the embedded model runs on (the ``local`` extra).

    Raises:
        ConfigError: llama-cpp-python is not installed, or does not load.
    """
    try:
        import llama_cpp  # noqa: F401
    except (ImportError, OSError, RuntimeError) as exc:
        # OSError, RuntimeError: it is installed but its shared library did not load.
        if isinstance(exc, ImportError) and exc.name == "llama_cpp":
            raise ConfigError(
                f"the embedded model needs the local extra: {INSTALL_LOCAL}"
            ) from None
        raise ConfigError(
            f"llama-cpp-python, which the embedded model runs on, does not load "
            f"({exc}): reinstall it with {INSTALL_LOCAL}"
        ) from exc


def _local_llm(spec: ModelSpec, settings: Settings, store: Store | None) -> LLM:
    """Return an LLM on the embedded model that ``spec`` names."""
    check_embedded_runtime()
    # The runtime is imported here only: without the extra, the other backends work.
    from veriscribe.llm.embedded.local import ChatLlamaCpp

    cfg = settings.llm
    path = local_model_path(settings, spec.name)
    chat = ChatLlamaCpp(
        model_path=path,
        n_ctx=cfg.context_tokens,
        n_threads=cfg.threads,
        # Calls beyond the contexts would only wait, so the concurrency is the
        # number worth having (the model caps it at the threads).
        contexts=cfg.local_contexts or cfg.concurrency,
        temperature=cfg.temperature,
        max_tokens=cfg.max_output_tokens,
        lookup=cfg.lookup,
        batched=cfg.batched,
    )
    return LLM(
        spec=spec,
        chat=chat,
        settings=cfg,
        count_tokens=chat.count_tokens,
        json_kwargs=lambda s: {"response_format": {"type": "json_object", "schema": s}},
        limit_kwargs=lambda n: {"max_tokens": n},
        context_tokens=cfg.context_tokens,
        store=store,
        endpoint=str(path),
        # A bundled model's file is named after it, so this is its label too.
        model_name=path.stem,
        # Another file under the same name is another model; the bundled model
        # rewritten as Q8_0 is the same one (the same logits), so it keeps the keys
        # of the file as shipped.
        identity_parts=(f"bytes={shipped_size(path)}",),
        scores_choices=True,
        guards_copying=True,
    )


def _ollama_llm(spec: ModelSpec, cfg: LLMSettings, store: Store | None) -> LLM:
    """Return an LLM on the Ollama server of ``OLLAMA_HOST`` (or the default)."""
    host = checked_url(ollama_host(), "OLLAMA_HOST")
    return LLM(
        spec=spec,
        chat=ollama_chat(spec.name, host, cfg),
        store=store,
        endpoint=shown_url(host),
        **server_llm_kwargs("ollama", cfg),
    )


def _openai_llm(spec: ModelSpec, settings: Settings, store: Store | None) -> LLM:
    """Return an LLM on OpenAI, or on the OpenAI-compatible server given.

    Raises:
        ConfigError: Neither an API key nor a server URL is given.
    """
    base_url = settings.base_url or os.environ.get("OPENAI_BASE_URL") or None
    api_key = os.environ.get("OPENAI_API_KEY")
    if not api_key and base_url is None:
        raise ConfigError(
            "openai backend needs OPENAI_API_KEY, or a server URL from --base-url or "
            "OPENAI_BASE_URL"
        )
    if base_url is not None:
        source = "--base-url" if settings.base_url else "OPENAI_BASE_URL"
        checked_url(base_url, source)
    return LLM(
        spec=spec,
        chat=openai_chat(spec.name, base_url, settings.llm, api_key),
        store=store,
        endpoint=shown_url(base_url or "https://api.openai.com/v1"),
        **server_llm_kwargs("openai", settings.llm),
    )


def _sim_llm(spec: ModelSpec, cfg: LLMSettings, store: Store | None) -> LLM:
    """Return an LLM on the simulated model, with the options ``spec`` gives it.

    Raises:
        ConfigError: An option of ``spec`` is not a number.
    """
    from veriscribe.llm.sim import SimChatModel

    try:
        sim = SimChatModel(
            latency=float(spec.params.get("latency", 0)),
            fail=float(spec.params.get("fail", 0)),
            seed=int(spec.params.get("seed", 0)),
        )
    except ValueError as exc:
        raise ConfigError(f"bad sim option in {spec}: {exc}") from exc
    return LLM(
        spec=spec,
        chat=sim,
        settings=cfg,
        count_tokens=estimate_tokens,
        json_kwargs=lambda s: {"response_schema": s},
        limit_kwargs=lambda n: {"max_tokens": n},
        context_tokens=cfg.context_tokens,
        store=store,
        endpoint="",
        # The latency changes when replies come, not what they say.
        identity_parts=(f"fail={sim.fail}", f"seed={sim.seed}"),
    )


def server_llm_kwargs(kind: str, cfg: LLMSettings) -> dict[str, Any]:
    """Return the LLM fields of a server backend: budgets and how requests say them."""
    if kind == "ollama":

        def ollama_limits(n: int) -> dict[str, Any]:
            # Per-call options replace the model's options wholesale, so repeat them.
            return {
                "options": {
                    "num_ctx": cfg.context_tokens,
                    "num_predict": n,
                    "temperature": cfg.temperature,
                }
            }

        return {
            "settings": cfg,
            "count_tokens": estimate_tokens,
            "json_kwargs": lambda s: {"format": s},
            "limit_kwargs": ollama_limits,
            "context_tokens": cfg.context_tokens,
        }
    return {
        "settings": cfg,
        "count_tokens": estimate_tokens,
        "json_kwargs": openai_schema_kwargs(cfg.openai_schema),
        "limit_kwargs": lambda n: {"max_tokens": n},
        "context_tokens": cfg.context_tokens,
        "constrains": cfg.openai_schema != "json_object",
    }


def endpoints_llm(
    spec: ModelSpec,
    endpoints: list[Endpoint],
    settings: Settings,
    store: Store | None = None,
) -> LLM:
    """Return an LLM for ``spec`` served by the given endpoints.

    One endpoint is an ordinary server backend at that URL (with the endpoint's
    limit as its concurrency); several are a pool that balances and fails over.
    """
    kind = endpoints[0].kind
    if len(endpoints) == 1:
        endpoint = endpoints[0]
        cfg = settings.llm.model_copy(update={"concurrency": endpoint.max_in_flight})
        return LLM(
            spec=spec,
            chat=endpoint_chat(endpoint, cfg),
            store=store,
            endpoint=endpoint.name,
            model_name=endpoint.model if endpoint.model != spec.name else "",
            **server_llm_kwargs(kind, cfg),
        )
    members = [
        Member(e.name, endpoint_chat(e, settings.llm), e.max_in_flight)
        for e in endpoints
    ]
    pool: EndpointPool[BaseChatModel] = EndpointPool(members)
    # Callers size their work to the calls that may be in flight: all servers' slots.
    cfg = settings.llm.model_copy(update={"concurrency": pool.capacity})
    return LLM(
        spec=spec,
        chat=members[0].client,
        store=store,
        endpoint=" ".join(m.name for m in members),
        pool=pool,
        identity_parts=tuple(sorted({f"serves={e.model}" for e in endpoints})),
        **server_llm_kwargs(kind, cfg),
    )
