"""The web page at `/` in the operating system's headless Chromium, on the `sim` model."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from browser import browser_page, needs_chromium, serving_corpus
from veriscribe.settings import Settings

pytestmark = needs_chromium

QUOTE = (
    "A diagnosis of hypertension requires elevated readings on at least two separate"
)
ARTICLE = """# Exercise and blood pressure in older adults

## Background

High blood pressure is common in older adults and raises the risk of stroke.

## Methods

We enrolled 120 adults aged 65 to 80 years in a randomised trial of supervised walking.

## Results

Systolic blood pressure fell by 8 mmHg after twelve weeks of walking.

## Conclusions

Supervised walking lowers blood pressure in older adults.
"""


@pytest.fixture
def base_url(tmp_path: Path) -> Iterator[str]:
    with serving_corpus(Settings(model="sim"), tmp_path / "serve") as url:
        yield url


def test_ask_shows_badges_and_a_citation_opens_its_section(
    base_url: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    article = tmp_path / "walking.md"
    article.write_text(ARTICLE, encoding="utf-8")
    with browser_page(base_url) as (page, requested, errors):
        expect(page.locator("#corpus option")).to_have_attribute("value", "htn")
        page.fill("#question", "How is hypertension diagnosed?")
        page.click("#ask-button")
        claim = page.locator('#claims li[data-badge="certified"]')
        expect(claim).to_have_count(1)
        expect(claim.locator(".badge")).to_have_text("certified")
        expect(claim).to_contain_text(QUOTE)
        expect(page.locator("#reading")).to_contain_text("hypertension:diagnosis")
        expect(page.locator("#ask-status")).to_have_text(
            re.compile("Answered: 1 claim")
        )

        claim.locator(".cite").first.click()
        expect(page.locator("#section")).to_be_visible()
        expect(page.locator("#section-title")).to_have_text("1 Diagnosis")
        mark = page.locator("#section-text mark")
        expect(mark).to_have_count(1)
        # The section breaks its lines where the quote does not: still found.
        assert " ".join(mark.inner_text().split()).startswith(QUOTE)
        expect(page.locator("#section-text")).to_contain_text(
            "validated device after five minutes"
        )

        page.click("#tab-abstracts")
        expect(page.locator("#abstracts")).to_be_visible()
        page.set_input_files("#article", str(article))
        page.click("#abstract-button")
        written = page.locator(".article .abstract")
        expect(written).to_contain_text("Supervised walking", timeout=120_000)
        expect(page.locator(".article h3")).to_have_text(
            "Exercise and blood pressure in older adults"
        )
        expect(page.locator("#run-status")).to_contain_text("1 done")
    assert not errors
    outside = [u for u in requested if not u.startswith((base_url, "data:"))]
    assert not outside, f"the page fetched from outside: {outside}"
