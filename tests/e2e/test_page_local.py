"""One real answer of the embedded model, streamed to the web page in Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from browser import browser_page, needs_chromium, serving_corpus
from veriscribe.settings import Settings

pytestmark = [pytest.mark.local_model, needs_chromium]


def test_a_real_answer_streams_to_the_page(local_gguf: Path, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    settings = Settings(local_model=local_gguf, db=tmp_path / "page.sqlite")
    with (
        serving_corpus(settings, tmp_path / "serve") as url,
        browser_page(url) as (page, _, errors),
    ):
        expect(page.locator("#corpus option")).to_have_attribute("value", "htn")
        page.fill("#question", "How is hypertension diagnosed?")
        page.click("#ask-button")
        # The sections read arrive with the first event, long before the answer.
        expect(page.locator("#reading")).to_contain_text(
            "hypertension:", timeout=300_000
        )
        expect(page.locator("#ask-status")).to_have_text(
            re.compile("Answered|does not answer|No answer"), timeout=600_000
        )
        badges = page.locator("#claims li").evaluate_all(
            "items => items.map((item) => item.dataset.badge)"
        )
        assert set(badges) <= {"certified", "recovered", "flagged", "not-checked"}
        if page.locator("#ask-status").inner_text().startswith("Answered"):
            assert badges, "an answer with no sentence shown"
    assert not errors
