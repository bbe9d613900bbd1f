"""The web page in the operating system's headless Chromium, driven by Playwright."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn

from loopback import free_port
from qa_helpers import GUIDELINE
from veriscribe import service
from veriscribe.serve import ServeConfig, create_app
from veriscribe.settings import Settings


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
needs_chromium = pytest.mark.skipif(
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


@contextmanager
def serving_corpus(settings: Settings, work_dir: Any) -> Iterator[str]:
    """Serve ``settings`` with the fixture guideline as corpus ``htn``."""
    asyncio.run(service.add_corpus(settings, "htn", [GUIDELINE]))
    with serving(ServeConfig(settings=settings, work_dir=work_dir)) as url:
        yield url


@contextmanager
def browser_page(base_url: str) -> Iterator[tuple[Any, list[str], list[str]]]:
    """Open the page; yield it, the URLs it requested and its script errors."""
    from playwright.sync_api import Request, sync_playwright

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
            yield page, requested, errors
        finally:
            browser.close()
