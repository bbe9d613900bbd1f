"""Calls decoded together: the sequences of one llama context, one batch per step.

On a CPU, writing a token costs about as much as reading the weights once, and one
reading serves a whole batch: on two cores, one step of four sequences' tokens took
107 ms against 45 ms for one token alone (1.7 times the tokens per second), where two
contexts of one thread each (the other way to run calls side by side) write at about
the speed of one 2-thread context. So with ``LLMSettings.batched`` the calls in flight
run as sequences of one context on all the threads (``n_seq_max`` of them, up to
``n_ctx`` tokens each in one shared cache), and every step decodes one batch holding
each sequence's next token (with its drafts, under prompt lookup) and chunks of the
prompts being read.

Each call keeps its own thread and llama-cpp-python's own generation loop
(``create_chat_completion``); only ``eval`` changes. ``SequenceLlama.eval`` hands its
tokens to the ``SharedContext`` and waits. The step runs when every sequence that has
started decoding has handed in its tokens (the last one in runs it), so the logits of a
step stay in place until every sequence has sampled from them. A sequence leaves when
its call ends (``leave``), so the others never wait for a call that will not come back.

Logits of a step depend on what else is in the batch (llama.cpp's kernels round
differently with the batch size), so the replies of calls that ran side by side can
differ from those of the same calls run alone: this is why it is an option. A call
alone wrote the same tokens as on a context of its own on every prompt tested.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import llama_cpp
from llama_cpp import _internals

from veriscribe.llm.embedded.sampling import SamplingLlama

__all__ = ["SequenceLlama", "SharedContext", "shared_sequences"]


@dataclass
class _Request:
    """Tokens a sequence hands in; ``rows`` are the batch rows of its logits."""

    seq: int
    tokens: list[int]
    n_past: int
    all_logits: bool
    fed: int = 0
    rows: list[int] = field(default_factory=list)
    done: bool = False
    error: BaseException | None = None


class SharedContext:
    """One llama context whose sequences decode together, one batch per step."""

    def __init__(self, ctx: Any, n_batch: int) -> None:
        self._ctx = ctx
        self._n_batch = n_batch
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self._ready = threading.Condition()
        self._started: set[int] = set()
        self._waiting: dict[int, _Request] = {}
        self.steps = 0
        """Batches decoded so far."""
        self.shared_steps = 0
        """Of those, batches that held tokens of more than one sequence."""

    def close(self) -> None:
        """Free the batch."""
        if self._batch is not None:
            llama_cpp.llama_batch_free(self._batch)
            self._batch = None

    def remove(self, seq: int, p0: int, p1: int = -1) -> bool:
        """Drop ``seq``'s cache from position ``p0`` to ``p1`` (never during a step)."""
        with self._ready:
            return bool(self._ctx.kv_cache_seq_rm(seq, p0, p1))

    def eval(
        self, seq: int, tokens: Sequence[int], n_past: int, all_logits: bool
    ) -> list[int]:
        """Decode ``tokens`` of ``seq`` from ``n_past``; return the rows of their logits.

        The last token has logits; with ``all_logits`` every token of the last step has
        them (a sampled token and its drafts, which fit one step). The rows are valid
        until ``seq`` hands in its next tokens or leaves.
        """
        request = _Request(seq, list(tokens), n_past, all_logits)
        with self._ready:
            self._ctx.kv_cache_seq_rm(seq, n_past, -1)
            self._started.add(seq)
            self._waiting[seq] = request
            while not request.done:
                if self._all_in():
                    self._step()
                else:
                    self._ready.wait()
        if request.error is not None:
            raise request.error
        return request.rows

    def leave(self, seq: int) -> None:
        """Take ``seq`` out of the steps until it hands in tokens again."""
        with self._ready:
            self._started.discard(seq)
            self._waiting.pop(seq, None)
            self._ready.notify_all()

    def _all_in(self) -> bool:
        return bool(self._waiting) and len(self._waiting) == len(self._started)

    def _step(self) -> None:
        """Decode one batch of every waiting sequence's next tokens (the lock held)."""
        batch = self._batch
        room = self._n_batch
        n = 0
        taken: list[tuple[_Request, int, int]] = []
        # Tokens being written first (one each, or a token and its drafts), then
        # prompts in the room that is left, in the order they came.
        order = sorted(self._waiting.values(), key=lambda r: len(r.tokens) - r.fed)
        counts = {}
        for request in order:
            count = min(len(request.tokens) - request.fed, room - n)
            if count > 0:
                counts[request.seq] = count
                n += count
        n = 0
        for request in sorted(self._waiting.values(), key=lambda r: r.seq):
            count = counts.get(request.seq, 0)
            if count <= 0:
                continue
            last = request.fed + count == len(request.tokens)
            for j in range(count):
                i = n + j
                batch.token[i] = request.tokens[request.fed + j]
                batch.pos[i] = request.n_past + request.fed + j
                batch.seq_id[i][0] = request.seq
                batch.n_seq_id[i] = 1
                batch.logits[i] = last and (request.all_logits or j == count - 1)
            taken.append((request, n, count))
            n += count
        batch.n_tokens = n
        error: BaseException | None = None
        try:
            self._ctx.decode(_Batch(batch))
        except Exception as exc:  # every request of the step fails alike
            error = exc
        self.steps += 1
        self.shared_steps += len(taken) > 1
        for request, start, count in taken:
            request.fed += count
            if error is not None:
                request.error, request.done = error, True
            elif request.fed == len(request.tokens):
                rows = range(start, start + count)
                request.rows = list(rows) if request.all_logits else [rows[-1]]
                request.done = True
            if request.done:
                del self._waiting[request.seq]
        self._ready.notify_all()


@dataclass
class _Batch:
    """What ``LlamaContext.decode`` reads of a batch wrapper."""

    batch: Any


class _SequenceContext:
    """A sequence's view of the shared context: cache edits touch its sequence only."""

    def __init__(self, ctx: Any, shared: SharedContext, seq: int, n_ctx: int) -> None:
        self._inner = ctx
        self._shared = shared
        self.seq = seq
        self._n_ctx = n_ctx

    @property
    def ctx(self) -> Any:
        return self._inner.ctx

    def n_ctx(self) -> int:
        return self._n_ctx

    def kv_cache_seq_rm(self, seq_id: int, p0: int, p1: int) -> bool:
        return self._shared.remove(self.seq, p0, p1)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _RowSampler:
    """llama-cpp-python's own sampler, reading the logits of this sequence's rows."""

    def __init__(self, inner: Any, llama: SequenceLlama) -> None:
        self._inner = inner
        self._llama = llama

    def sample(self, ctx: Any, idx: int) -> int:
        return int(self._inner.sample(ctx, self._llama.logits_row(idx)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class SequenceLlama(SamplingLlama):
    """A ``SamplingLlama`` that is one sequence of a ``SharedContext``.

    It shares the model, the context and their memory with the other sequences; its
    own are the tokens it holds (``input_ids``, ``n_tokens``) and the rows of its last
    logits. Made by ``shared_sequences``, never by ``__init__``.
    """

    shared: SharedContext
    seq: int
    _rows: list[int]
    _host: SamplingLlama

    def eval(self, tokens: Any) -> None:
        """Decode ``tokens`` in the shared context's next steps (see ``SharedContext``)."""
        tokens = list(tokens)
        if not tokens:
            return
        drafted = self.draft_model is not None and 1 < len(tokens)
        n_past = self.n_tokens
        self._rows = self.shared.eval(self.seq, tokens, n_past, all_logits=drafted)
        self.input_ids[n_past : n_past + len(tokens)] = tokens
        self.n_tokens += len(tokens)
        # Other sequences' steps overwrite these logits once this call has sampled:
        # a later call on the same prompt must read its last token again.
        self._requires_eval = True
        self.drafted_batches += drafted

    fits_threads = False

    def logits_row(self, idx: int) -> int:
        """Return the batch row of the logits ``idx`` (-1: the last) of the last eval."""
        return self._rows[idx]

    def _stock_sampler(self, sampler: Any) -> Any:
        return _RowSampler(sampler, self)

    def leave(self) -> None:
        """End this sequence's part in the steps (its call is over)."""
        self.shared.leave(self.seq)

    def close(self) -> None:
        """Free the shared model and context (every sequence's)."""
        self.shared.close()
        self._host.close()

    def __del__(self) -> None:
        """Never free what the other sequences share on garbage collection."""


def shared_sequences(
    model_path: str, n_ctx: int, n_threads: int, sequences: int, n_batch: int = 512
) -> list[SequenceLlama]:
    """Load ``model_path`` once as ``sequences`` sequences of one context on ``n_threads``.

    Each sequence holds up to ``n_ctx`` tokens.
    """
    host = SamplingLlama(
        model_path=model_path,
        n_ctx=n_ctx * sequences,
        n_threads=n_threads,
        n_threads_batch=n_threads,
        n_batch=n_batch,
        verbose=False,
    )
    # Llama makes a one-sequence context; swap it for one that holds ``sequences``.
    # Their caches share one buffer (``kv_unified``): with a cache of its own for each,
    # this build handed a sequence another's logits when a prompt chunk and other
    # sequences' tokens shared a batch (a gap of 22 in the logits, where rounding
    # gives under 1: tests/e2e/test_batched_local.py). Flash attention skips the cells
    # the attention mask hides (the other sequences'); without it, each token's
    # attention costs as if it read every sequence's cache.
    params = host.context_params
    params.n_seq_max = sequences
    params.kv_unified = True
    params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
    host._ctx.close()  # type: ignore[no-untyped-call]
    ctx = host._stack.enter_context(
        contextlib.closing(
            _internals.LlamaContext(model=host._model, params=params, verbose=False)
        )
    )
    host._ctx = ctx
    shared = SharedContext(ctx, n_batch)
    views = []
    for seq in range(sequences):
        view = object.__new__(SequenceLlama)
        view.__dict__.update(host.__dict__)
        # Llama's own code reaches the context through ``_ctx``: give it the view.
        view._ctx = _SequenceContext(ctx, shared, seq, n_ctx)  # type: ignore[assignment]
        view._n_ctx = n_ctx
        view.input_ids = host.input_ids[:n_ctx].copy()
        view.n_tokens = 0
        view._rows = []
        view._sampler = None
        view.shared = shared
        view.seq = seq
        view._host = host
        views.append(view)
    return views
