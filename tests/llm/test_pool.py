"""Balancing over servers: fewest in flight, limits kept, cooldowns, waiting for a server."""

from __future__ import annotations

import asyncio
import time

import pytest

from veriscribe.llm.pool import EndpointPool, Member


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def pool_of(*limits: int, clock: Clock | None = None) -> EndpointPool[str]:
    members = [Member(f"s{i}", f"client{i}", limit) for i, limit in enumerate(limits)]
    if clock is None:
        return EndpointPool(members)
    return EndpointPool(members, clock=clock)


def test_picks_the_member_with_fewest_in_flight() -> None:
    pool = pool_of(4, 4, 4)
    pool.members[0].in_flight = 2
    pool.members[1].in_flight = 1
    pool.members[2].in_flight = 3
    picked = pool.pick(0.0)
    assert picked is not None and picked.name == "s1"


def test_ties_go_round_robin() -> None:
    pool = pool_of(4, 4, 4)
    order = []
    for _ in range(6):
        picked = pool.pick(0.0)
        assert picked is not None
        order.append(picked.name)
    # Nothing is in flight (pick alone takes no slot), so every pick is a tie.
    assert order == ["s0", "s1", "s2", "s0", "s1", "s2"]


def test_full_and_cooling_members_are_skipped() -> None:
    pool = pool_of(1, 2)
    pool.members[0].in_flight = 1
    pool.members[1].cooling_until = 10.0
    assert pool.pick(5.0) is None
    picked = pool.pick(10.0)
    assert picked is not None and picked.name == "s1"


async def test_leases_never_exceed_a_members_limit() -> None:
    pool = pool_of(1, 2, 3)
    peak = dict.fromkeys(("s0", "s1", "s2"), 0)

    async def call() -> None:
        async with pool.lease() as lease:
            member = lease.member
            peak[member.name] = max(peak[member.name], member.in_flight)
            await asyncio.sleep(0.01)

    await asyncio.gather(*(call() for _ in range(60)))
    assert peak == {"s0": 1, "s1": 2, "s2": 3}
    assert all(m.in_flight == 0 for m in pool.members)


async def test_calls_spread_by_in_flight_count() -> None:
    pool = pool_of(8, 8, 8, 8)
    served: dict[str, int] = {}

    async def call() -> None:
        async with pool.lease() as lease:
            served[lease.member.name] = served.get(lease.member.name, 0) + 1
            await asyncio.sleep(0.01)

    await asyncio.gather(*(call() for _ in range(16)))
    # 16 calls at once over four servers of eight slots: four each, not eight on two.
    assert served == {"s0": 4, "s1": 4, "s2": 4, "s3": 4}


def test_cooldown_doubles_and_is_capped() -> None:
    clock = Clock()
    pool = pool_of(2, clock=clock)
    member = pool.members[0]
    rests = []
    for _ in range(9):
        pool.strike(member, started=clock.now)
        rests.append(member.cooling_until - clock.now)
        clock.now = member.cooling_until + 0.001
    assert rests == pytest.approx([1, 2, 4, 8, 16, 32, 60, 60, 60])


def test_an_outage_counts_once_however_many_calls_saw_it() -> None:
    clock = Clock()
    pool = pool_of(8, clock=clock)
    member = pool.members[0]
    sent = clock.now
    clock.now += 0.5
    for _ in range(8):  # eight calls in flight when the server died
        pool.strike(member, started=sent)
    assert member.strikes == 1
    assert member.cooling_until == pytest.approx(clock.now + 1)


def test_a_server_back_from_cooldown_takes_one_probe_then_its_full_limit() -> None:
    clock = Clock()
    pool = pool_of(4, clock=clock)
    member = pool.members[0]
    pool.strike(member, started=clock.now)
    clock.now += 1.5
    assert member.capacity() == 1
    member.in_flight = 1
    assert pool.pick(clock.now) is None  # the probe is out
    pool.heal(member, started=clock.now)
    assert member.strikes == 0 and member.capacity() == 4


def test_an_answer_sent_before_the_outage_does_not_end_it() -> None:
    clock = Clock()
    pool = pool_of(4, clock=clock)
    member = pool.members[0]
    sent = clock.now
    clock.now += 0.1
    pool.strike(member, started=clock.now)
    pool.heal(member, started=sent)
    assert member.strikes == 1


async def test_when_every_member_cools_a_call_waits_for_the_first_back() -> None:
    pool = pool_of(2, 2)
    pool.cooldown_first_s = 0.3
    now = time.monotonic()
    pool.strike(pool.members[0], started=now)
    pool.members[1].cooling_until = now + 5  # long away
    pool.members[1].struck_at = now
    started = time.perf_counter()
    async with pool.lease() as lease:
        waited = time.perf_counter() - started
        assert lease.member.name == "s0"
    assert 0.25 <= waited < 2


async def test_a_freed_slot_wakes_a_waiting_call() -> None:
    pool = pool_of(1)
    order = []

    async def call(name: str, hold: float) -> None:
        async with pool.lease():
            order.append(name)
            await asyncio.sleep(hold)

    started = time.perf_counter()
    await asyncio.gather(call("a", 0.2), call("b", 0))
    assert order == ["a", "b"]
    assert time.perf_counter() - started < 1
