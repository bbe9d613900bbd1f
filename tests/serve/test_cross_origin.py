"""A page on another origin, in the system's headless Chromium, against a loopback server.

The hostile page is served by a second server on 127.0.0.1 (another port, so another
origin): it builds a file and auto-submits a multipart form to the API, which needs no
preflight. The same page served from the API's own origin must still work, and a name
that resolves to 127.0.0.1 (DNS rebinding, made with Chromium's resolver rules) must
read nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from browser import chromium_browser, needs_chromium, page_server, serving
from veriscribe.serve import ServeConfig
from veriscribe.settings import Settings

pytestmark = needs_chromium

PLANTED = "# Planted\\n\\n## Advice\\n\\nA planted section that no user added.\\n"


def hostile_page(target: str) -> str:
    """Return a page that uploads a document to ``target`` as soon as it loads."""
    return f"""<!doctype html>
<html><body>
<form id="form" method="post" enctype="multipart/form-data" action="{target}">
  <input type="file" name="files" id="file">
</form>
<script>
  const data = new DataTransfer();
  data.items.add(new File(["{PLANTED}"], "planted.md", {{type: "text/markdown"}}));
  document.getElementById("file").files = data.files;
  document.getElementById("form").submit();
</script>
</body></html>"""


def corpus_status(base_url: str, name: str) -> int:
    return httpx.get(f"{base_url}/v1/corpora/{name}", timeout=30).status_code


@pytest.fixture
def api(tmp_path: Path) -> Iterator[str]:
    """A loopback server with no token that also serves the page at ``/own``."""
    base: list[str] = []

    def own_page(app: FastAPI) -> None:
        @app.get("/own")
        async def own() -> HTMLResponse:
            return HTMLResponse(hostile_page(f"{base[0]}/v1/corpora/own/documents"))

    config = ServeConfig(settings=Settings(model="sim"), work_dir=tmp_path / "serve")
    with serving(config, own_page) as url:
        base.append(url)
        yield url


def submitted(page_url: str, target: str) -> tuple[int, str]:
    """Open ``page_url`` in Chromium; return the status and text of its form's answer."""
    with chromium_browser() as browser:
        page = browser.new_page()
        page.set_default_timeout(60_000)
        with page.expect_response(lambda r: r.url == target) as answered:
            page.goto(page_url)
        response = answered.value
        return response.status, response.text()


def test_a_page_on_another_origin_cannot_upload(api: str) -> None:
    target = f"{api}/v1/corpora/planted/documents"
    with page_server(hostile_page(target)) as hostile:
        assert hostile != api  # another port: another origin
        status, text = submitted(hostile + "/", target)
    assert status == 403, text
    assert "--allow-origin" in text and hostile in text
    assert corpus_status(api, "planted") == 404  # nothing was added


def test_the_same_page_on_the_servers_own_origin_uploads(api: str) -> None:
    status, text = submitted(f"{api}/own", f"{api}/v1/corpora/own/documents")
    assert status == 200, text
    assert '"added":["planted"]' in text.replace(" ", "")
    assert corpus_status(api, "own") == 200


def test_a_name_rebound_to_loopback_reads_nothing(api: str) -> None:
    port = api.rsplit(":", 1)[1]
    rule = "--host-resolver-rules=MAP rebound.example 127.0.0.1"
    with chromium_browser(rule) as browser:
        page = browser.new_page()
        for path in ("/", "/v1/corpora"):
            response = page.goto(f"http://rebound.example:{port}{path}")
            assert response is not None
            assert response.status == 403, response.text()
            assert "Host header" in response.text()
        # The rule holds: the same server under its own address answers.
        response = page.goto(f"{api}/v1/corpora")
        assert response is not None and response.status == 200
