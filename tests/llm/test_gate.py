"""The call gate: a limit on calls in flight that serves waiting calls by priority."""

from __future__ import annotations

import asyncio

import pytest

from veriscribe.llm.gate import CallGate, call_priority


async def _hold(gate: CallGate, release: asyncio.Event) -> None:
    async with gate:
        await release.wait()


async def _enter(gate: CallGate, priority: int, name: str, order: list[str]) -> None:
    call_priority.set(priority)
    async with gate:
        order.append(name)
        await asyncio.sleep(0)


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def _held() -> tuple[CallGate, asyncio.Event, asyncio.Task[None]]:
    """Return a one-slot gate whose slot a task holds until the event is set."""
    gate = CallGate(1)
    release = asyncio.Event()
    holder = asyncio.create_task(_hold(gate, release))
    await _settle()
    return gate, release, holder


async def test_waiting_calls_go_by_priority_then_arrival() -> None:
    gate, release, holder = await _held()
    order: list[str] = []
    waiters = [
        asyncio.create_task(_enter(gate, priority, name, order))
        for priority, name in ((5, "late"), (1, "old-a"), (3, "mid"), (1, "old-b"))
    ]
    await _settle()
    assert gate.in_use == 1 and gate.waiting == 4
    release.set()
    await asyncio.gather(holder, *waiters)
    assert order == ["old-a", "old-b", "mid", "late"]
    assert gate.in_use == 0 and gate.waiting == 0


async def test_no_more_than_the_limit_at_once() -> None:
    gate = CallGate(3)
    inside = peak = 0

    async def call(priority: int) -> None:
        nonlocal inside, peak
        call_priority.set(priority)
        async with gate:
            inside += 1
            peak = max(peak, inside)
            await asyncio.sleep(0.001)
            inside -= 1

    await asyncio.gather(*(call(i % 4) for i in range(40)))
    assert peak == 3
    assert gate.in_use == 0


async def test_a_cancelled_waiter_leaves_its_place() -> None:
    gate, release, holder = await _held()
    order: list[str] = []
    first = asyncio.create_task(_enter(gate, 0, "cancelled", order))
    second = asyncio.create_task(_enter(gate, 1, "served", order))
    await _settle()
    first.cancel()
    await _settle()
    assert gate.waiting == 1
    release.set()
    await asyncio.gather(holder, second)
    assert first.cancelled()
    assert order == ["served"]
    assert gate.in_use == 0


async def test_a_slot_given_to_a_cancelled_waiter_passes_on() -> None:
    gate = CallGate(1)
    await gate.__aenter__()
    order: list[str] = []
    first = asyncio.create_task(_enter(gate, 0, "cancelled", order))
    second = asyncio.create_task(_enter(gate, 1, "served", order))
    await _settle()
    await gate.__aexit__(None, None, None)  # the slot goes to ``first``...
    first.cancel()  # ...which is cancelled before it runs
    await second
    assert first.cancelled()
    assert order == ["served"]
    assert gate.in_use == 0


async def test_priority_is_read_from_the_calling_context() -> None:
    gate, release, holder = await _held()
    order: list[str] = []

    async def branch(name: str) -> None:
        async with gate:  # no priority of its own
            order.append(name)

    async def article(priority: int, name: str) -> None:
        call_priority.set(priority)
        # A branch started inside the article's task inherits its priority.
        await asyncio.create_task(branch(name))

    tasks = [asyncio.create_task(article(p, n)) for p, n in ((2, "b"), (0, "a"))]
    await _settle()
    release.set()
    await asyncio.gather(holder, *tasks)
    assert order == ["a", "b"]


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        CallGate(0)
