"""How long one model call may take, and how long retrying it may take in all.

A server that hangs sends nothing, so the only way to notice is a clock. A fixed clock
is either too short for a long answer on a slow CPU or far too long for a short one, so
each call gets a timeout scaled to its work: a fixed allowance, plus its prompt at the
slowest prompt-reading rate a working server is allowed, plus its output budget at the
slowest decoding rate (settings ``timeout_base_s``, ``min_prompt_tokens_per_s``,
``min_output_tokens_per_s``), capped by ``timeout_s``. A call that fails transiently
is tried ``retries + 1`` times in all with a short backoff, so the time before an error
is bounded by :func:`give_up_bound`.
"""

from __future__ import annotations

from veriscribe.settings import LLMSettings

BACKOFF_FIRST_S = 0.5
"""Pause before the first retry; it doubles for each further one."""
BACKOFF_MAX_S = 8.0
"""Longest pause between two attempts: a server that is back should be used soon."""


def call_timeout(
    settings: LLMSettings, backend: str, prompt_tokens: int, max_tokens: int
) -> float:
    """Return the seconds one call with this prompt and output budget may take."""
    seconds = (
        settings.timeout_base_s
        + prompt_tokens / settings.min_prompt_tokens_per_s
        + max_tokens / settings.min_output_tokens_per_s
    )
    seconds = min(seconds, settings.timeout_s)
    if backend == "local":
        # In-process decoding cannot hang the way a server can; the clock only guards
        # against a runaway. It runs while up to `concurrency - 1` calls ahead of this
        # one hold the single inference context, on a CPU shared with everything else.
        seconds *= settings.local_timeout_scale * settings.concurrency
    return seconds


def backoff(attempt: int) -> float:
    """Return the pause after failed attempt number ``attempt`` (1-based)."""
    return float(min(BACKOFF_FIRST_S * 2 ** (attempt - 1), BACKOFF_MAX_S))


def give_up_bound(
    settings: LLMSettings, backend: str, prompt_tokens: int, max_tokens: int
) -> float:
    """Return the most seconds a call may take before its error, all attempts included."""
    attempts = settings.retries + 1
    per_call = call_timeout(settings, backend, prompt_tokens, max_tokens)
    return attempts * per_call + sum(backoff(n) for n in range(1, attempts))
