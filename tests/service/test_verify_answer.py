"""``veriscribe.verify_answer``: the checker as a Python function."""

from __future__ import annotations

import pytest

import veriscribe
from qa_helpers import CORPUS, DIAGNOSIS, add_fixture_corpus, cite
from veriscribe.errors import InputError, NotFound
from veriscribe.settings import Settings
from veriscribe.store.connect import open_database


@pytest.fixture
async def settings(default_db: str) -> Settings:
    async with await open_database(default_db) as store:
        await add_fixture_corpus(store)
    return Settings(db=default_db, model="ollama:unreachable")


async def test_deterministic_checks_need_no_model(settings: Settings) -> None:
    answer = (
        "Two readings are needed. "
        + cite(DIAGNOSIS, "at least two separate\noccasions")
        + " Nothing else matters."
    )
    result = await veriscribe.verify_answer(
        answer, corpus=CORPUS, judge=False, all_claims=True, settings=settings
    )
    assert [c.status for c in result.claims] == ["unjudged", "uncited"]
    assert result.citations[0].tier == "exact"
    assert result.read_set == [DIAGNOSIS]
    assert result.model is None and result.usage.calls == 0


async def test_errors_the_caller_can_act_on(settings: Settings) -> None:
    with pytest.raises(NotFound):
        await veriscribe.verify_answer("x.", corpus="none", settings=settings)
    with pytest.raises(InputError):
        await veriscribe.verify_answer("  ", corpus=CORPUS, settings=settings)
