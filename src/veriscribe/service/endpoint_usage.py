"""What each model server did for a run: calls, errors, tokens and latency."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from veriscribe.results import EndpointReport
from veriscribe.store import calls
from veriscribe.store.db import Store

FAILED = ("timeout", "unavailable", "error")
"""Call log outcomes of an attempt the server did not answer usefully."""


def percentile(values: Sequence[float], share: float) -> float:
    """Return the nearest-rank percentile ``share`` (0..1) of sorted ``values``."""
    if not values:
        raise ValueError("no values")
    rank = max(1, math.ceil(share * len(values)))
    return values[min(rank, len(values)) - 1]


def summarise_calls(
    rows: Iterable[tuple[str | None, str, int, int, float]],
) -> list[EndpointReport]:
    """Return per-endpoint totals of call log rows, busiest endpoint first.

    Args:
        rows: ``(endpoint, outcome, prompt_tokens, output_tokens, latency_s)`` of
            each logged attempt. Answers from the cache reached no server and are
            left out; so are rows logged before endpoints were recorded.
    """
    groups: dict[str, dict[str, Any]] = {}
    for endpoint, outcome, prompt, output, latency in rows:
        if outcome == "cached" or not endpoint:
            continue
        group = groups.setdefault(
            endpoint,
            {
                "endpoint": endpoint,
                "calls": 0,
                "ok": 0,
                "errors": 0,
                "prompt_tokens": 0,
                "output_tokens": 0,
                "latencies": [],
            },
        )
        group["calls"] += 1
        if outcome in FAILED:
            group["errors"] += 1
        else:
            group["ok"] += 1
            group["prompt_tokens"] += int(prompt or 0)
            group["output_tokens"] += int(output or 0)
            group["latencies"].append(float(latency or 0.0))
    summary = []
    for group in groups.values():
        latencies = sorted(group.pop("latencies"))
        group["latency_p50_s"] = (
            round(percentile(latencies, 0.5), 3) if latencies else None
        )
        group["latency_p95_s"] = (
            round(percentile(latencies, 0.95), 3) if latencies else None
        )
        summary.append(EndpointReport.model_validate(group))
    return sorted(summary, key=lambda g: (-g.calls, g.endpoint))


async def endpoint_usage(store: Store, run_id: str) -> list[EndpointReport]:
    """Return what each model server did for a run (see :func:`summarise_calls`)."""
    return summarise_calls(await calls.run_calls(store, run_id))
