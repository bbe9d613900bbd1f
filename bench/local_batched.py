"""Calls on the embedded model: contexts of their own against sequences of one context.

The embedded backend runs calls side by side either on a pool of llama contexts (two
1-thread contexts on two threads) or, batched (``LLMSettings.batched``), as sequences of
one context on all the threads whose next tokens are decoded in one batch per step
(``llm/embedded/batched.py``). This bench reads ``--calls`` facet-sized prompts (development-
article paragraphs, about 600 tokens) and decodes ``--tokens`` greedy tokens of each, in
three layouts, alternating in every round so that a busy machine slows them alike:

- ``two_contexts``: two contexts of one thread each, each taking the next call when its
  last one ends (the pool's layout without batching);
- ``batched``: the product's ``SharedContext``, one sequence per call, each call on its
  own thread handing in its tokens;
- ``one``: one context of two threads, the calls one after the other.

Decoding is free (argmax of the logits, no grammar, end of text ignored): it measures
the engine. Per layout it prints the seconds of the whole round (reading and decoding)
and the output tokens per second; the last line is
``batched_over_two_contexts=<x> two_contexts_over_one=<x>`` (medians of the per-round
ratios of the round times: above 1, the first named is faster).

Usage: ``PYTHONPATH=src nice -n 5 .venv/bin/python bench/local_batched.py
[--calls 4] [--tokens 64] [--rounds 3]``
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


def call_on(engine: Engine, prompt: list[int], count: int) -> None:
    """Read ``prompt`` on a context of its own and decode ``count`` tokens."""
    engine.clear()
    engine.read([prompt])
    engine.generate([prompt], count)


def call_in(shared: Any, llama: Any, seq: int, prompt: list[int], count: int) -> None:
    """Read ``prompt`` as sequence ``seq`` of a shared context; decode ``count`` tokens."""
    import llama_cpp

    rows = shared.eval(seq, prompt, 0, all_logits=False)
    for n in range(count):
        pointer = llama_cpp.llama_get_logits_ith(llama.ctx, rows[-1])
        logits = np.ctypeslib.as_array(pointer, shape=(llama.n_vocab(),))
        rows = shared.eval(seq, [int(np.argmax(logits))], len(prompt) + n, False)
    shared.leave(seq)


def on_threads(work: list[Callable[[], Any]]) -> None:
    """Run each piece of ``work`` on a thread of its own; wait for all."""
    threads = [threading.Thread(target=w) for w in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def main() -> None:
    """Print the three layouts' times and their ratios."""
    from veriscribe.llm.embedded.batched import shared_sequences

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    path = local_model_path(Settings())
    one = Engine(path, threads=2, seqs=1, n_ctx=2048)
    pair = [Engine(path, threads=1, seqs=1, n_ctx=2048) for _ in range(2)]
    sequences = shared_sequences(str(path), 2048, 2, args.calls)
    shared = sequences[0].shared
    prompts = [one.tokens(t) for t in passages(args.calls)]
    print(
        f"prompt tokens {[len(p) for p in prompts]}, {args.tokens} output tokens each"
    )

    def run_batched() -> None:
        on_threads(
            [
                lambda s=seq: call_in(shared, sequences[s], s, prompts[s], args.tokens)
                for seq in range(args.calls)
            ]
        )

    def run_one() -> None:
        for prompt in prompts:
            call_on(one, prompt, args.tokens)

    def run_pair() -> None:
        queue = list(prompts)
        lock = threading.Lock()

        def worker(engine: Engine) -> None:
            while True:
                with lock:
                    if not queue:
                        return
                    prompt = queue.pop(0)
                call_on(engine, prompt, args.tokens)

        on_threads([lambda e=engine: worker(e) for engine in pair])

    layouts = {"two_contexts": run_pair, "batched": run_batched, "one": run_one}
    for run in layouts.values():  # page the weights in, warm every context
        run()
    totals: dict[str, list[float]] = {name: [] for name in layouts}
    for r in range(args.rounds):
        order = list(layouts) if r % 2 == 0 else list(reversed(layouts))
        for name in order:
            seconds = timed(layouts[name])
            totals[name].append(seconds)
            tps = args.calls * args.tokens / seconds
            print(
                f"round {r} {name}: {seconds:.2f}s ({tps:.1f} output tokens/s in all)"
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
