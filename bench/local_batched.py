"""Two calls on the embedded model: two contexts against two sequences in one context.

The embedded backend runs calls side by side on a pool of llama contexts (two 1-thread
contexts on two threads by default). llama.cpp can also decode several sequences in one
context, one token of each per step (one batch), on all the threads. This bench reads
the same two facet-sized prompts (development-article paragraphs, about 600 tokens) and
then decodes ``--tokens`` greedy tokens of each, in three layouts, alternating in every
round so that a busy machine slows them alike:

- ``two_contexts``: two contexts of one thread each, one call per context, from two
  threads (today's default for calls side by side);
- ``batched``: one context of two threads holding both sequences, each decoding step one
  batch of two tokens;
- ``one``: one context of two threads, the two calls one after the other.

Decoding is free (argmax of the logits, no grammar, end of text ignored): it measures
the engine, which bounds what batched sampling could give. Per layout it prints the
prompt seconds and the output tokens per second of both calls together; the last line is
``batched_over_two_contexts=<x> two_contexts_over_one=<x>`` (medians of the per-round
ratios of the whole-call times).

Usage: ``PYTHONPATH=src nice -n 5 .venv/bin/python bench/local_batched.py
[--tokens 64] [--rounds 3]``
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from veriscribe.documents.articles import Article, expand_inputs, read_articles
from veriscribe.llm.factory import local_model_path
from veriscribe.settings import Settings

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "articles" / "jats"
PROMPT_CHARS = 2400  # about 600 tokens


def passages(count: int) -> list[str]:
    """Return ``count`` facet-sized passages from different development articles."""
    found: list[str] = []
    for path in expand_inputs([str(DATA)]):
        for article in read_articles(path):
            if isinstance(article, Article) and article.paragraphs:
                text = "\n\n".join(p.text for p in article.paragraphs)
                found.append(
                    "Summarise these paragraphs in five sentences:\n\n"
                    + text[:PROMPT_CHARS]
                )
            if len(found) == count:
                return found
    raise SystemExit(f"fewer than {count} articles in {DATA}")


class Engine:
    """One llama context on the bundled model, with ``seqs`` sequences."""

    def __init__(self, path: Path, threads: int, seqs: int, n_ctx: int) -> None:
        import llama_cpp
        from llama_cpp import _internals as internals

        self.lib = llama_cpp
        self.llama = llama_cpp.Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=threads,
            n_threads_batch=threads,
            n_batch=512,
            verbose=False,
        )
        params = self.llama.context_params
        params.n_seq_max = seqs
        params.n_ctx = n_ctx * seqs
        params.kv_unified = False
        self.ctx = internals.LlamaContext(
            model=self.llama._model, params=params, verbose=False
        )
        self.batch = internals.LlamaBatch(n_tokens=512, embd=0, n_seq_max=seqs)
        self.n_vocab = self.llama.n_vocab()

    def tokens(self, text: str) -> list[int]:
        """Return the tokens of a prompt."""
        return self.llama.tokenize(text.encode("utf-8"))

    def clear(self) -> None:
        """Forget every sequence."""
        memory = self.lib.llama_get_memory(self.ctx.ctx)
        self.lib.llama_memory_clear(memory, True)

    def _decode(self, entries: list[tuple[int, int, int, bool]]) -> None:
        """Decode (token, position, sequence, wants logits) entries as one batch."""
        batch = self.batch.batch
        batch.n_tokens = len(entries)
        for i, (token, pos, seq, logits) in enumerate(entries):
            batch.token[i] = token
            batch.pos[i] = pos
            batch.seq_id[i][0] = seq
            batch.n_seq_id[i] = 1
            batch.logits[i] = logits
        if self.lib.llama_decode(self.ctx.ctx, batch) != 0:
            raise RuntimeError("llama_decode failed")

    def _argmax(self, i: int) -> int:
        pointer = self.lib.llama_get_logits_ith(self.ctx.ctx, i)
        logits = np.ctypeslib.as_array(
            ctypes.cast(pointer, ctypes.POINTER(ctypes.c_float)), shape=(self.n_vocab,)
        )
        return int(np.argmax(logits))

    def read(self, prompts: list[list[int]]) -> None:
        """Read each prompt but its last token into its sequence, 512 tokens a batch."""
        for seq, prompt in enumerate(prompts):
            head = prompt[:-1]
            for start in range(0, len(head), 512):
                chunk = head[start : start + 512]
                self._decode([(t, start + j, seq, False) for j, t in enumerate(chunk)])

    def generate(self, prompts: list[list[int]], count: int) -> None:
        """Decode ``count`` tokens of every sequence, one batch per step.

        The first step reads every prompt's last token, which gives its logits.
        """
        step = [(p[-1], len(p) - 1, seq, True) for seq, p in enumerate(prompts)]
        for n in range(count):
            self._decode(step)
            step = [
                (self._argmax(i), len(p) + n, i, True) for i, p in enumerate(prompts)
            ]


def timed(run: Callable[[], Any]) -> float:
    """Return the seconds ``run`` takes."""
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def main() -> None:
    """Print the three layouts' times and their ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    path = local_model_path(Settings())
    batched = Engine(path, threads=2, seqs=2, n_ctx=2048)
    one = Engine(path, threads=2, seqs=1, n_ctx=2048)
    pair = [Engine(path, threads=1, seqs=1, n_ctx=2048) for _ in range(2)]
    texts = passages(2)
    prompts = [batched.tokens(t) for t in texts]
    print(
        f"prompt tokens {[len(p) for p in prompts]}, {args.tokens} output tokens each"
    )

    def run_batched() -> tuple[float, float]:
        batched.clear()
        return timed(lambda: batched.read(prompts)), timed(
            lambda: batched.generate(prompts, args.tokens)
        )

    def run_one() -> tuple[float, float]:
        read = decode = 0.0
        for prompt in prompts:
            one.clear()
            read += timed(lambda p=prompt: one.read([p]))
            decode += timed(lambda p=prompt: one.generate([p], args.tokens))
        return read, decode

    def run_pair() -> tuple[float, float]:
        reads = [0.0, 0.0]
        decodes = [0.0, 0.0]

        def call(i: int) -> None:
            pair[i].clear()
            reads[i] = timed(lambda: pair[i].read([prompts[i]]))
            decodes[i] = timed(lambda: pair[i].generate([prompts[i]], args.tokens))

        threads = [threading.Thread(target=call, args=(i,)) for i in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return max(reads), max(decodes)

    layouts = {"two_contexts": run_pair, "batched": run_batched, "one": run_one}
    for run in layouts.values():  # page the weights in, warm every context
        run()
    totals: dict[str, list[float]] = {name: [] for name in layouts}
    for r in range(args.rounds):
        order = list(layouts) if r % 2 == 0 else list(reversed(layouts))
        for name in order:
            read, decode = layouts[name]()
            totals[name].append(read + decode)
            tps = 2 * args.tokens / decode
            print(
                f"round {r} {name}: prompts {read:.2f}s, decoding {decode:.2f}s "
                f"({tps:.1f} output tokens/s in all)"
            )
    rounds = range(args.rounds)
    batched_ratio = statistics.median(
        totals["two_contexts"][r] / totals["batched"][r] for r in rounds
    )
    pair_ratio = statistics.median(
        totals["one"][r] / totals["two_contexts"][r] for r in rounds
    )
    print(
        f"batched_over_two_contexts={batched_ratio:.2f} "
        f"two_contexts_over_one={pair_ratio:.2f}"
    )


if __name__ == "__main__":
    main()
