"""The web page in the operating system's headless Chromium, driven by Playwright."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI

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
def serving(
    config: ServeConfig, extend: Callable[[FastAPI], None] | None = None
) -> Iterator[str]:
    """Run the app (with ``extend``'s routes) on uvicorn in a thread; yield its URL."""
    port = free_port()
    app = create_app(config)
    if extend is not None:
        extend(app)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
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
def page_server(html: str) -> Iterator[str]:
    """Serve ``html`` at every path of a second server on 127.0.0.1; yield its URL."""
    body = html.encode("utf-8")

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextmanager
def chromium_browser(*args: str) -> Iterator[Any]:
    """Launch the system Chromium, headless, with extra command-line ``args``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        assert BROWSER is not None
        browser = playwright.chromium.launch(
            executable_path=BROWSER, args=["--no-sandbox", *args]
        )
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def browser_page(base_url: str) -> Iterator[tuple[Any, list[str], list[str]]]:
    """Open the page; yield it, the URLs it requested and its script errors."""
    from playwright.sync_api import Request

    requested: list[str] = []
    errors: list[str] = []
    with chromium_browser() as browser:
        page = browser.new_page()
        page.set_default_timeout(60_000)

        def seen(request: Request) -> None:
            requested.append(request.url)

        page.on("request", seen)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(base_url + "/")
        yield page, requested, errors
