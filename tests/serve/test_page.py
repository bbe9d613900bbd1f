"""The web page at `/` in the operating system's headless Chromium, on the `sim` model."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn

from loopback import free_port
from qa_helpers import GUIDELINE
from veriscribe import service
from veriscribe.serve import ServeConfig, create_app
from veriscribe.settings import Settings

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


def chromium() -> str | None:
    """Return the system Chromium (VERISCRIBE_CHROMIUM, else on PATH), if any."""
    given = os.environ.get("VERISCRIBE_CHROMIUM")
    if given:
        return given
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    return None


BROWSER = chromium()
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no Chromium on this machine (apt-get install chromium; .ci/run does)",
)


@contextmanager
def serving(config: ServeConfig) -> Iterator[str]:
    """Run the app on a real uvicorn in a thread; yield its base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(config), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(400):
            if server.started or not thread.is_alive():
                break
            threading.Event().wait(0.05)
        assert server.started, "the server did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)


@pytest.fixture
def base_url(tmp_path: Path) -> Iterator[str]:
    settings = Settings(model="sim")
    asyncio.run(service.add_corpus(settings, "htn", [GUIDELINE]))
    with serving(ServeConfig(settings=settings, work_dir=tmp_path / "serve")) as url:
        yield url


def test_ask_shows_badges_and_a_citation_opens_its_section(
    base_url: str, tmp_path: Path
) -> None:
    from playwright.sync_api import Request, expect, sync_playwright

    article = tmp_path / "walking.md"
    article.write_text(ARTICLE, encoding="utf-8")
    requested: list[str] = []
    errors: list[str] = []
    with sync_playwright() as playwright:
        assert BROWSER is not None
        browser = playwright.chromium.launch(
            executable_path=BROWSER, args=["--no-sandbox"]
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(60_000)

            def seen(request: Request) -> None:
                requested.append(request.url)

            page.on("request", seen)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(base_url + "/")

            expect(page.locator("#corpus option")).to_have_attribute("value", "htn")
            page.fill("#question", "How is hypertension diagnosed?")
            page.click("#ask-button")
            claim = page.locator('#claims li[data-badge="certified"]')
            expect(claim).to_have_count(1)
            expect(claim.locator(".badge")).to_have_text("certified")
            expect(claim).to_contain_text(QUOTE)
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
        finally:
            browser.close()
    assert not errors
    outside = [u for u in requested if not u.startswith((base_url, "data:"))]
    assert not outside, f"the page fetched from outside: {outside}"
