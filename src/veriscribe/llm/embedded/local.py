"""The embedded backend: llama.cpp in this process, no server, no download.

The model's contexts are loaded once per (file, context size, threads, contexts) and
shared by every model object that names them. A llama context is not safe for concurrent
use, so each call holds one context of the pool (``contexts``) while it runs in a worker
thread; calls beyond the pool's size wait for a free context instead of corrupting one.
The threads are split among the calls running at that moment, refitted before every
token: a call alone uses all ``n_threads``, two side by side one share each, never more
in all than ``n_threads``.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import math
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import ConfigDict, PrivateAttr

if TYPE_CHECKING:
    from veriscribe.llm.embedded.copy_guard import CommonWords

from veriscribe.errors import ModelFileMissing
from veriscribe.llm.embedded.candidates import CandidateFilter
from veriscribe.llm.embedded.contexts import ContextPool, share_threads, split_threads
from veriscribe.llm.embedded.grammar import (
    check_grammar,
    route_llama_logs,
    schema_grammar,
)
from veriscribe.llm.results import chat_result

_ROLES = {"system": "system", "human": "user", "ai": "assistant"}
_LOADED: dict[tuple[str, int, int, int, bool], ContextPool[Any]] = {}
_LOAD_LOCK = threading.Lock()
_WORDS: dict[str, CommonWords] = {}
_WORDS_LOCK = threading.Lock()
# Tokens the chat template adds around each message (role header and end marker).
MESSAGE_OVERHEAD_TOKENS = 6


def _close_all() -> None:
    # Free llama.cpp models before the interpreter tears its modules down; freeing them
    # during teardown raises inside llama_cpp and prints a traceback at exit.
    with _LOAD_LOCK:
        for pool in _LOADED.values():
            for llama in pool.contexts:
                llama.close()
        _LOADED.clear()


atexit.register(_close_all)


def _check_gguf(path: Path) -> None:
    if not path.is_file():
        raise ModelFileMissing(f"model file not found: {path}")
    with path.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            raise ModelFileMissing(f"not a GGUF model file: {path}")


def layout(n_threads: int, contexts: int, batched: bool) -> tuple[int, int]:
    """Return (calls that run at once, threads each) of the embedded backend.

    Batched, every call is a sequence of one context on all the threads; otherwise
    each has a context of its own (see ``split_threads``).
    """
    if batched:
        return max(1, contexts), max(1, n_threads)
    return split_threads(n_threads, contexts)


def load_llama(
    path: Path, n_ctx: int, n_threads: int, contexts: int = 1, batched: bool = False
) -> ContextPool[Any]:
    """Return the shared contexts of this model file, loading them once.

    Batched (``veriscribe.llm.embedded.batched``), the ``contexts`` are sequences of one context
    that decode together on ``n_threads``. Otherwise ``contexts`` is capped at
    ``n_threads``, and each context gets ``n_threads // contexts`` threads for decoding
    and for reading prompts alike.
    """
    count, threads_each = layout(n_threads, contexts, batched)
    key = (str(path.resolve()), n_ctx, n_threads, count, batched)
    with _LOAD_LOCK:
        if key not in _LOADED:
            _check_gguf(path)
            from veriscribe.llm.embedded.sampling import SamplingLlama

            route_llama_logs()

            if batched:
                from veriscribe.llm.embedded.batched import shared_sequences

                sequences = shared_sequences(str(path), n_ctx, n_threads, count)
                _LOADED[key] = ContextPool(sequences, threads_each)
                return _LOADED[key]
            llamas = [
                SamplingLlama(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    # Both set: prompt reading otherwise takes every core of the
                    # machine, however many other contexts are decoding.
                    n_threads=threads_each,
                    n_threads_batch=threads_each,
                    n_batch=512,
                    verbose=False,
                )
                for _ in range(count)
            ]
            _LOADED[key] = ContextPool(llamas, threads_each)
        return _LOADED[key]


@contextmanager
def _lease(pool: ContextPool[Any], prompt: str) -> Iterator[Any]:
    """Hold a context of ``pool`` for one call; a shared one's sequence leaves after."""
    with pool.lease(prompt) as llama:
        try:
            yield llama
        finally:
            llama.leave()


def vocabulary_words(llama: Any) -> CommonWords:
    """Return the common words of a model's vocabulary, read once per model file.

    Every token that is a space and letters is a word the model writes whole: about
    30,000 for Qwen2.5, read in about a second (the copy guard's word list).
    """
    from veriscribe.llm.embedded.copy_guard import common_words

    key = str(llama.model_path)
    with _WORDS_LOCK:
        if key not in _WORDS:
            _WORDS[key] = common_words(
                llama.detokenize([token]) for token in range(llama.n_vocab())
            )
        return _WORDS[key]


def to_chat_messages(messages: list[BaseMessage]) -> list[dict[str, str]]:
    """Convert LangChain messages to llama.cpp chat messages."""
    return [
        {"role": _ROLES.get(m.type, "user"), "content": str(m.content)}
        for m in messages
    ]


def prompt_key(messages: list[dict[str, str]]) -> str:
    """Return text that starts the same way as the chat template's rendering does."""
    return "".join(f"<{m['role']}>{m['content']}</{m['role']}>" for m in messages)


class ChatLlamaCpp(BaseChatModel):
    """A LangChain chat model over an in-process llama.cpp model.

    Pass ``response_format={"type": "json_object", "schema": {...}}`` (through ``bind`` or
    as a call keyword) for grammar-constrained JSON output. With ``contexts`` above one,
    that many calls run at once, each on ``n_threads // contexts`` threads.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_path: Path
    n_ctx: int = 8192
    n_threads: int = 2
    contexts: int = 1
    """Calls that may run at once, each in its own llama context (at most n_threads)."""
    temperature: float = 0.1
    max_tokens: int = 1024
    seed: int = 0
    lookup: bool = False
    """Prompt-lookup decoding (``sampling.LOOKUP``) where the sampler serves."""
    batched: bool = False
    """Run the ``contexts`` calls as sequences of one context, decoded together."""
    _pool: ContextPool[Any] | None = PrivateAttr(default=None)
    _grammars: dict[str, Any] = PrivateAttr(default_factory=dict)
    _stock_sampling: bool = PrivateAttr(default=False)
    """Sample with llama-cpp-python's own chain (the slow one), to compare outputs."""

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-embedded"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": str(self.model_path), "n_ctx": self.n_ctx}

    def load(self) -> float:
        """Load the model file if it is not loaded yet; return the seconds it took."""
        start = time.perf_counter()
        if self._pool is None:
            self._pool = load_llama(
                self.model_path, self.n_ctx, self.n_threads, self.contexts, self.batched
            )
        return time.perf_counter() - start

    def layout(self) -> tuple[int, int]:
        """Return (contexts, threads of each context) this model runs with."""
        return layout(self.n_threads, self.contexts, self.batched)

    def _loaded(self) -> ContextPool[Any]:
        self.load()
        assert self._pool is not None
        return self._pool

    def count_tokens(self, messages: list[BaseMessage]) -> int:
        """Count prompt tokens with the model's own tokenizer."""
        # Tokenizing reads only the vocabulary, never a context's state, so any context
        # serves, even one that is decoding.
        llama = self._loaded().contexts[0]
        total = 0
        for message in to_chat_messages(messages):
            content = message["content"].encode("utf-8")
            total += len(llama.tokenize(content, add_bos=False, special=False))
            total += MESSAGE_OVERHEAD_TOKENS
        return total

    def grammar(self, schema: dict[str, Any]) -> Any:
        """Return the llama.cpp grammar for a JSON schema, checked to parse, or raise.

        llama-cpp-python falls back to unconstrained JSON, silently, when it cannot
        convert a schema, and crashes on a grammar llama.cpp cannot parse; building the
        grammar here (:mod:`veriscribe.llm.embedded.grammar`) and having llama.cpp parse it once
        makes either failure one clear error before anything is decoded.

        Raises:
            ConstraintError: no grammar llama.cpp accepts could be made of the schema.
        """
        from llama_cpp.llama_grammar import LlamaGrammar

        text = json.dumps(schema)
        if text not in self._grammars:
            gbnf = schema_grammar(schema)
            check_grammar(self._loaded().contexts[0]._model.vocab, gbnf)
            self._grammars[text] = LlamaGrammar.from_string(gbnf, verbose=False)
        return self._grammars[text]

    def _choice_probs(
        self, messages: list[BaseMessage], choices: Sequence[str]
    ) -> ChatResult:
        """Read the probability of each one-word answer from the next-token logits."""
        captured: list[Any] = []

        def capture(input_ids: Any, scores: Any) -> Any:
            if not captured:
                captured.append(scores.copy())
            return scores

        from llama_cpp import LogitsProcessorList

        chat = to_chat_messages(messages)
        pool = self._loaded()
        with _lease(pool, prompt_key(chat)) as llama:
            self._fit_threads(pool, llama)
            response = llama.create_chat_completion(
                messages=chat,
                temperature=0.0,
                max_tokens=1,
                logits_processor=LogitsProcessorList([capture]),
                seed=self.seed,
            )
            first_tokens = {c: self._first_tokens(llama, c) for c in choices}
        logits = captured[0]
        top = float(logits.max())
        mass = {
            c: sum(math.exp(float(logits[t]) - top) for t in tokens)
            for c, tokens in first_tokens.items()
        }
        total = sum(mass.values()) or 1.0
        probs = {c: m / total for c, m in mass.items()}
        usage = response.get("usage") or {}
        return chat_result(
            json.dumps(probs),
            usage.get("prompt_tokens", 0),
            1,
            {"finish_reason": "length"},
        )

    @staticmethod
    def _first_tokens(llama: Any, word: str) -> set[int]:
        """Return the first token of each way the model may start a one-word answer."""
        tokens = set()
        for form in {word, word.lower(), word.capitalize(), word.upper()}:
            for text in (form, " " + form):
                ids = llama.tokenize(text.encode(), add_bos=False, special=False)
                if ids:
                    tokens.add(ids[0])
        return tokens

    @staticmethod
    def _copy_guard(llama: Any, spec: dict[str, Any] | None) -> Any:
        """Return the logits processor that enforces a copy limit, or None."""
        if not spec:
            return None
        from veriscribe.llm.embedded.copy_guard import CopyGuard, copy_guard_processor

        def token_bytes(token: int) -> bytes:
            return bytes(llama.detokenize([token]))

        guard = CopyGuard(
            str(spec["source"]),
            int(spec["limit"]),
            words=spec.get("words"),
            common=vocabulary_words(llama),
        )
        return copy_guard_processor(guard, token_bytes)

    def _fit_threads(self, pool: ContextPool[Any], llama: Any) -> None:
        """Give this context its share of the threads among the calls running now.

        A call alone gets every thread (prompt reading is twice as fast on two as on
        one); calls side by side split them, never more in all than ``n_threads``.
        """
        if not llama.fits_threads:
            return
        threads = share_threads(self.n_threads, pool.size - pool.free)
        if getattr(llama, "_veriscribe_threads", None) != threads:
            import llama_cpp

            llama_cpp.llama_set_n_threads(llama.ctx, threads, threads)
            llama._veriscribe_threads = threads

    def _thread_governor(self, pool: ContextPool[Any], llama: Any) -> CandidateFilter:
        """Return a logits processor that refits the threads before every next token."""

        def govern(input_ids: Any, ids: Any, logits: Any) -> None:
            self._fit_threads(pool, llama)

        return CandidateFilter(govern, 0)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        pool = self._loaded()
        if kwargs.get("choice_probs"):
            return self._choice_probs(messages, kwargs["choice_probs"])
        response_format = kwargs.get("response_format")
        grammar = None
        if response_format and response_format.get("schema"):
            grammar = self.grammar(response_format["schema"])
            response_format = None
        from llama_cpp import LogitsProcessorList

        chat = to_chat_messages(messages)
        with _lease(pool, prompt_key(chat)) as llama:
            self._fit_threads(pool, llama)
            llama.stock_sampling = self._stock_sampling
            llama.lookup = self.lookup
            processors: list[Any] = [self._thread_governor(pool, llama)]
            guard = self._copy_guard(llama, kwargs.get("copy_guard"))
            if guard is not None:
                processors.append(guard)
            response = llama.create_chat_completion(
                messages=chat,
                temperature=kwargs.get("temperature", self.temperature),
                max_tokens=kwargs.get("max_tokens", self.max_tokens),
                response_format=response_format,
                grammar=grammar,
                stop=stop,
                seed=kwargs.get("seed", self.seed),
                logits_processor=LogitsProcessorList(processors),
            )
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        return chat_result(
            choice["message"].get("content") or "",
            usage.get("prompt_tokens", 0),
            usage.get("completion_tokens", 0),
            {"finish_reason": choice.get("finish_reason")},
        )

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return await asyncio.to_thread(self._generate, messages, stop, None, **kwargs)
