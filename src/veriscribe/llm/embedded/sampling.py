"""Constrained decoding on the embedded model at the speed of free decoding.

llama-cpp-python's sampler chain (``Llama._init_sampler``) runs the Python logits
processors on the whole vocabulary (about 151k tokens, wrapped in numpy at every
step), then the grammar on the whole vocabulary, then picks a token: a JSON-schema
grammar halves the tokens per second. ``CandidateSampler`` does what llama.cpp's own
sampler does instead: it cuts the ``CUT`` best-scoring tokens first (in C), runs the
processors on those only (they must be ``CandidateFilter``s), and checks the grammar
on the token it is about to pick; only when the grammar rejects it is the grammar
applied to the cut, and only when nothing in the cut is allowed, to the whole
vocabulary, exactly as the stock chain does.

Same tokens as the stock chain:

- greedy (temperature 0): the best allowed token of the cut is the best allowed token
  of the vocabulary when it scores above the cut's lowest raw score (everything
  outside scores at most that); ties go to the lowest token id, as llama.cpp's greedy
  sampler does over the id-ordered vocabulary. Otherwise the whole vocabulary decides.
- temperature above 0: the stock chain is grammar -> top-k -> typical -> top-p -> min-p
  -> temperature -> dist. When the cut holds at least top-k allowed tokens, the top-k of
  the masked vocabulary are all in it, so the same chain over the masked cut draws from
  the same distribution (the same token for the same seed). When it holds fewer, the
  allowed tokens outside the cut (all scoring at most the cut's lowest raw score) could
  only matter through min-p, which drops them when the cut's floor is below its
  threshold, and through top-p's normalisation, whose effect is bounded: the cut
  serves when the tokens that survive both are the same whatever those outside
  tokens weigh (``_same_survivors``). Otherwise the whole vocabulary decides. This is
  grammar-masked sampling, not llama.cpp's "resample on rejection", whose
  distribution leans toward the unconstrained one.

Anything the cut cannot reproduce (repetition penalties, mirostat, a processor that
needs the whole vocabulary) goes to the stock chain, as does every call on a context
whose ``stock_sampling`` is set.
"""

from __future__ import annotations

import ctypes
from typing import Any

import llama_cpp
import numpy as np
import numpy.typing as npt
from llama_cpp import Llama, LogitsProcessorList
from llama_cpp.llama_grammar import LlamaGrammar
from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

from veriscribe.llm.embedded.candidates import CandidateFilter

__all__ = ["CUT", "LOOKUP", "CandidateSampler", "SamplingLlama"]

CUT = 64
"""Tokens kept before the processors and the grammar: above the copy guard's 40."""
_MARGIN = 1e-4
"""Relative slack on top-p's threshold for float rounding (llama.cpp sums in float32)."""

LOOKUP = LlamaPromptLookupDecoding(max_ngram_size=2, num_pred_tokens=4)
"""Drafts: the 4 tokens that followed the last 2 (else 1) tokens where they last
appeared in the prompt or the reply; checked in one batch with the next token."""
DRAFTED = LOOKUP.num_pred_tokens + 1
"""The longest batch that ``eval`` takes for a sampled token and its drafts."""

_ROW = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)


class _Scratch:
    """A vocabulary-sized llama_token_data array, reused by every call on a context."""

    def __init__(self, n_vocab: int) -> None:
        self.buffer = (llama_cpp.llama_token_data * n_vocab)()
        self.rows: npt.NDArray[Any] = np.frombuffer(
            memoryview(self.buffer).cast("B"), dtype=_ROW
        )
        self.ids = np.arange(n_vocab, dtype=np.intc)
        self.array = llama_cpp.llama_token_data_array(
            data=ctypes.cast(self.buffer, llama_cpp.llama_token_data_p),
            size=n_vocab,
            selected=-1,
            sorted=False,
        )
        self.one = (llama_cpp.llama_token_data * 1)()
        self.one_array = llama_cpp.llama_token_data_array(
            data=ctypes.cast(self.one, llama_cpp.llama_token_data_p),
            size=1,
            selected=-1,
            sorted=False,
        )


class CandidateSampler:
    """Pick each token from the best candidates; the whole vocabulary only on a miss.

    It stands in for llama-cpp-python's ``LlamaSampler``: ``sample(ctx, idx)`` returns
    the token and advances the grammar. ``steps`` and ``misses`` (steps that needed the
    whole vocabulary) say how well the cut served.
    """

    def __init__(
        self,
        llama: SamplingLlama,
        filters: list[CandidateFilter],
        grammar: Any,
        temp: float,
        top_k: int,
        top_p: float,
        min_p: float,
        typical_p: float,
    ) -> None:
        self._llama = llama
        self._filters = filters
        self._scratch = llama.scratch()
        self._n_vocab = len(self._scratch.ids)
        self._greedy = temp == 0.0
        self._top_k = top_k
        self._top_p = top_p
        self._min_p = min_p
        self._typical_p = typical_p
        self.steps = 0
        self.misses = 0
        self._cut = llama_cpp.llama_sampler_init_top_k(CUT)
        self._grammar = None
        if grammar is not None:
            self._grammar = llama_cpp.llama_sampler_init_grammar(
                llama._model.vocab,
                grammar._grammar.encode("utf-8"),
                grammar._root.encode("utf-8"),
            )
            if self._grammar is None:
                raise ValueError("llama.cpp cannot parse this grammar")
        self._pick = llama_cpp.llama_sampler_chain_init(
            llama_cpp.llama_sampler_chain_default_params()
        )
        # The stock chain's tail, in its order (Llama._init_sampler).
        if self._greedy:
            tail = [llama_cpp.llama_sampler_init_greedy()]
        else:
            tail = [
                llama_cpp.llama_sampler_init_top_k(top_k),
                llama_cpp.llama_sampler_init_typical(typical_p, 1),
                llama_cpp.llama_sampler_init_top_p(top_p, 1),
                llama_cpp.llama_sampler_init_min_p(min_p, 1),
                llama_cpp.llama_sampler_init_temp(temp),
                llama_cpp.llama_sampler_init_dist(llama._seed),
            ]
        for sampler in tail:
            llama_cpp.llama_sampler_chain_add(self._pick, sampler)

    def close(self) -> None:
        """Free the llama.cpp samplers."""
        for name in ("_cut", "_grammar", "_pick"):
            sampler = getattr(self, name, None)
            if sampler is not None:
                llama_cpp.llama_sampler_free(sampler)
                setattr(self, name, None)

    def __del__(self) -> None:
        self.close()

    def sample(self, ctx: Any, idx: int = -1) -> int:
        """Return the next token for the logits at ``idx`` and let the grammar accept it."""
        pointer = llama_cpp.llama_get_logits_ith(ctx.ctx, self._llama.logits_row(idx))
        logits = np.ctypeslib.as_array(pointer, shape=(self._n_vocab,))
        self._fill(logits)
        scratch = self._scratch
        llama_cpp.llama_sampler_apply(self._cut, ctypes.byref(scratch.array))
        cut = scratch.rows[: scratch.array.size]
        floor = float(cut["logit"][-1])
        input_ids = self._llama._input_ids
        if idx < -1:  # a drafted position: its context ends there
            input_ids = input_ids[: len(input_ids) + idx + 1]
        for processor in self._filters:
            k = min(processor.candidates, len(cut))
            processor.check(input_ids, cut["id"][:k], cut["logit"][:k])
        forbidden = cut["id"][cut["logit"] == -np.inf].copy()
        self.steps += 1
        token = self._choose(cut, floor)
        if token is None:
            self.misses += 1
            token = self._whole(logits, forbidden)
        if self._grammar is not None:
            llama_cpp.llama_sampler_accept(self._grammar, token)
        return token

    def _fill(self, logits: npt.NDArray[np.single]) -> None:
        scratch = self._scratch
        scratch.rows["id"] = scratch.ids
        scratch.rows["logit"] = logits
        array = scratch.array
        array.size = self._n_vocab
        array.selected = -1
        array.sorted = False

    def _choose(self, cut: npt.NDArray[Any], floor: float) -> int | None:
        """Return the token the stock chain would pick, or None if the cut cannot tell."""
        if self._greedy:
            best = _best(cut)
            if best is not None and cut["logit"][best] > floor:
                token = int(cut["id"][best])
                if self._grammar is None or self._allows(token):
                    return token
            if self._grammar is None:
                return None
            self._apply_grammar()
            best = _best(cut)
            if best is None or not cut["logit"][best] > floor:
                return None
            return int(cut["id"][best])
        if self._grammar is not None:
            self._apply_grammar()
        logit = cut["logit"]
        allowed = int(np.count_nonzero(logit > -np.inf))
        if allowed == 0:
            return None
        if allowed < self._top_k and not self._same_survivors(logit, floor):
            return None
        return self._pick_from_array()

    def _same_survivors(self, logit: npt.NDArray[np.single], floor: float) -> bool:
        """Return whether top-p and min-p keep the same tokens whatever lies outside.

        Outside the cut are at most top-k allowed tokens, each scoring at most
        ``floor``: min-p drops them all when ``floor`` is below its threshold, and
        they can only add to top-p's normaliser, by at most ``outside``.
        """
        if self._typical_p < 1.0 or self._min_p <= 0.0:
            return False
        kept = np.sort(logit[logit > -np.inf].astype(np.float64))[::-1]
        top = kept[0]
        threshold = top + np.log(self._min_p)
        if not floor < threshold:
            return False  # a token outside could pass min-p
        by_min_p = int(np.count_nonzero(kept >= threshold))
        if self._top_p >= 1.0:
            return True
        weights = np.exp(kept - top)
        cumulative = np.cumsum(weights)
        outside = (self._top_k - len(kept)) * np.exp(floor - top)
        fewest = _first_reaching(
            cumulative / cumulative[-1], self._top_p * (1 - _MARGIN)
        )
        most = _first_reaching(
            cumulative / (cumulative[-1] + outside), self._top_p * (1 + _MARGIN)
        )
        return min(fewest, by_min_p) == min(most, by_min_p)

    def _whole(self, logits: npt.NDArray[np.single], forbidden: Any) -> int:
        """Pick as the stock chain does: over the whole vocabulary."""
        self._fill(logits)
        self._scratch.rows["logit"][forbidden] = -np.inf
        if self._grammar is not None:
            self._apply_grammar()
        return self._pick_from_array()

    def _apply_grammar(self) -> None:
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(self._scratch.array))

    def _pick_from_array(self) -> int:
        array = self._scratch.array
        array.selected = -1
        array.sorted = False
        llama_cpp.llama_sampler_apply(self._pick, ctypes.byref(array))
        return int(array.data[array.selected].id)

    def _allows(self, token: int) -> bool:
        scratch = self._scratch
        scratch.one[0].id = llama_cpp.llama_token(token)
        scratch.one[0].logit = 0.0
        scratch.one_array.size = 1
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(scratch.one_array))
        return bool(scratch.one[0].logit != -np.inf)


def _first_reaching(shares: npt.NDArray[np.float64], p: float) -> int:
    """Return how many tokens top-p keeps: up to the first share at least ``p``."""
    reached = np.flatnonzero(shares >= p)
    return int(reached[0]) + 1 if len(reached) else len(shares)


def _best(cut: npt.NDArray[Any]) -> int | None:
    """Return the index of the best finite logit in ``cut``, the lowest id on ties."""
    logit = cut["logit"]
    top = logit.max()
    if top == -np.inf:
        return None
    ties = np.flatnonzero(logit == top)
    if len(ties) == 1:
        return int(ties[0])
    return int(ties[np.argmin(cut["id"][ties])])


class SamplingLlama(Llama):
    """A ``Llama`` whose calls sample with ``CandidateSampler`` when it can serve.

    Set ``stock_sampling`` to run llama-cpp-python's own chain instead (to compare).
    """

    stock_sampling = False
    lookup = False
    """Draft tokens from the prompt (``LOOKUP``) and check them in one batch."""
    drafted_batches = 0
    """Batches of a sampled token and its drafts evaluated so far."""

    fits_threads = True
    """Whether a call may set this context's threads (a shared context keeps all)."""

    def logits_row(self, idx: int) -> int:
        """Return where llama.cpp holds the logits ``idx`` (-1: the last) of the last eval."""
        return idx

    def leave(self) -> None:
        """End a call on this context (a context of its own: nothing to do)."""

    def scratch(self) -> _Scratch:
        """Return this context's vocabulary-sized sampling buffer."""
        scratch: _Scratch | None = getattr(self, "_veriscribe_scratch", None)
        if scratch is None:
            scratch = _Scratch(int(self.n_vocab()))
            self._veriscribe_scratch = scratch
        return scratch

    def _init_sampler(
        self,
        top_k: int = 40,
        top_p: float = 0.95,
        min_p: float = 0.05,
        typical_p: float = 1.0,
        temp: float = 0.80,
        repeat_penalty: float = 1.0,
        frequency_penalty: float = 0.0,
        presence_penalty: float = 0.0,
        tfs_z: float = 1.0,
        mirostat_mode: int = 0,
        mirostat_eta: float = 0.1,
        mirostat_tau: float = 5.0,
        penalize_nl: bool = True,
        logits_processor: LogitsProcessorList | None = None,
        grammar: LlamaGrammar | None = None,
    ) -> Any:
        options: dict[str, Any] = dict(
            top_k=top_k,
            top_p=top_p,
            min_p=min_p,
            typical_p=typical_p,
            temp=temp,
            repeat_penalty=repeat_penalty,
            frequency_penalty=frequency_penalty,
            presence_penalty=presence_penalty,
            tfs_z=tfs_z,
            mirostat_mode=mirostat_mode,
            mirostat_eta=mirostat_eta,
            mirostat_tau=mirostat_tau,
            penalize_nl=penalize_nl,
            logits_processor=logits_processor,
            grammar=grammar,
        )
        sampler = None if self.stock_sampling else self._candidate_sampler(options)
        # Drafted positions are sampled by ``CandidateSampler`` only: it gives each
        # filter the tokens up to that position.
        self.draft_model = LOOKUP if self.lookup and sampler is not None else None
        if sampler is not None:
            return sampler
        return self._stock_sampler(super()._init_sampler(**options))

    def _stock_sampler(self, sampler: Any) -> Any:
        """Return llama-cpp-python's sampler as this context's calls use it."""
        return sampler

    def eval(self, tokens: Any) -> None:
        """Evaluate tokens; a sampled token with its drafts keeps every position's logits.

        The stock ``eval`` keeps only the last position's logits unless the context
        keeps them all (``logits_all``: a vocabulary-sized row per context position).
        """
        drafted = self.draft_model is not None and 1 < len(tokens) <= DRAFTED
        if not drafted:  # a prompt, or one token: only the last logits are read
            super().eval(tokens)
            return
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        n_past = self.n_tokens
        self._batch.set_batch(batch=list(tokens), n_past=n_past, logits_all=True)
        self._ctx.decode(self._batch)
        self.input_ids[n_past : n_past + len(tokens)] = tokens
        self.n_tokens += len(tokens)
        self._requires_eval = False
        self.drafted_batches += 1

    def _candidate_sampler(self, options: dict[str, Any]) -> CandidateSampler | None:
        """Return a ``CandidateSampler`` for these options, or None if it cannot serve."""
        processors = list(options.get("logits_processor") or [])
        filters = [p for p in processors if isinstance(p, CandidateFilter)]
        temp = float(options.get("temp", 0.8))
        top_k = int(options.get("top_k", 40))
        neutral = (
            options.get("repeat_penalty", 1.0) == 1.0
            and options.get("frequency_penalty", 0.0) == 0.0
            and options.get("presence_penalty", 0.0) == 0.0
        )
        if (
            len(filters) != len(processors)
            or any(f.candidates > CUT for f in filters)
            or not neutral
            or options.get("mirostat_mode", 0) != 0
            or temp < 0.0
            or (temp > 0.0 and not 0 < top_k <= CUT)
        ):
            return None
        return CandidateSampler(
            self,
            filters,
            options.get("grammar"),
            temp=temp,
            top_k=top_k,
            top_p=float(options.get("top_p", 0.95)),
            min_p=float(options.get("min_p", 0.05)),
            typical_p=float(options.get("typical_p", 1.0)),
        )
