"""The web page at ``/``: plain HTML, CSS and JavaScript shipped in the package."""

from __future__ import annotations

from functools import cache
from importlib import resources

from fastapi import FastAPI
from fastapi import Path as PathParam
from fastapi.responses import Response

from veriscribe.errors import NotFound
from veriscribe.serve.guard import PAGE_PREFIX

ASSETS = {
    "app.css": "text/css; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
}
"""The page's files besides ``index.html``, with their media types."""
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
)
"""Only this server's own files and API: the page fetches nothing from outside."""
HEADERS = {
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@cache
def asset(name: str) -> bytes:
    """Return one of the page's files as shipped in the package."""
    return resources.files("veriscribe.serve").joinpath("web", name).read_bytes()


def add_page(app: FastAPI) -> None:
    """Serve the web page at ``/`` and its files under ``/ui/``."""

    @app.get("/", include_in_schema=False)
    async def index() -> Response:
        return Response(asset("index.html"), media_type="text/html", headers=HEADERS)

    @app.get(PAGE_PREFIX + "{name}", include_in_schema=False)
    async def page_file(name: str = PathParam()) -> Response:
        media_type = ASSETS.get(name)
        if media_type is None:
            raise NotFound(f"no page file {name!r}")
        return Response(asset(name), media_type=media_type, headers=HEADERS)
