"""A long-running process builds a corpus's indexes once and again only when it changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qa_helpers import FIXTURES
from veriscribe.nodes.qa import state
from veriscribe.service import qa
from veriscribe.service.corpora import add_corpus
from veriscribe.settings import Settings

QUESTION = "Which drugs are first-line for hypertension?"


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every fused index built, by the sections it holds."""
    made: list[str] = []
    real = state.FusedIndex

    def counted(sections: Any, *args: Any) -> Any:
        made.append(",".join(sorted(s.key for s in sections)))
        return real(sections, *args)

    monkeypatch.setattr(state, "FusedIndex", counted)
    return made


async def test_questions_after_the_first_use_the_warm_index(
    tmp_path: Path, built: list[str]
) -> None:
    settings = Settings(db=tmp_path / "w.db", model="sim")
    await add_corpus(settings, "h", [FIXTURES / "guidelines" / "hypertension.md"])
    warm = qa.WarmIndexes()
    first = await qa.ask(settings, "h", QUESTION, warm=warm)
    second = await qa.ask(
        settings, "h", "How often is blood pressure checked?", warm=warm
    )
    assert not first.reused and not second.reused
    assert len(built) == 1
    # A changed corpus is read again; the index of what it was is not used.
    more = tmp_path / "more.md"
    more.write_text("# Salt\n\nWe recommend less salt in food for all adults.\n")
    await add_corpus(settings, "h", [more])
    await qa.ask(settings, "h", QUESTION, warm=warm)
    assert len(built) == 2 and built[1] != built[0]
    # Without a warm cache (the command line's ask), each question builds its own.
    await qa.ask(settings, "h", "Is salt bad for blood pressure?")
    assert len(built) == 3


async def test_at_most_a_few_corpora_are_kept(tmp_path: Path, built: list[str]) -> None:
    settings = Settings(db=tmp_path / "w.db", model="sim")
    warm = qa.WarmIndexes(most=2)
    for n in range(3):
        await add_corpus(
            settings, f"c{n}", [FIXTURES / "guidelines" / "hypertension.md"]
        )
        await qa.ask(settings, f"c{n}", QUESTION, warm=warm)
    assert warm.corpora() == ["c1", "c2"]
