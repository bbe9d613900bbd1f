"""A multi-file upload with a bad file: the good ones are added, the bad one named."""

from __future__ import annotations

from pathlib import Path

import httpx
from fastapi import FastAPI

from qa_helpers import GUIDELINE
from veriscribe.serve import ServeConfig, create_app
from veriscribe.settings import Settings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "documents"


def make_app(tmp_path: Path) -> FastAPI:
    config = ServeConfig(settings=Settings(model="sim"), work_dir=tmp_path / "serve")
    return create_app(config)


async def test_an_upload_with_a_bad_file_adds_the_good_ones(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    cut = (FIXTURES / "ngc-11074-1col.pdf").read_bytes()[:900]
    files = [
        ("files", ("hypertension.md", GUIDELINE.read_bytes(), "text/markdown")),
        ("files", ("cut.pdf", cut, "application/pdf")),
    ]
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http,
    ):
        added = await http.post("/v1/corpora/htn/documents", files=files)
        assert added.status_code == 200, added.text
        report = added.json()
        assert report["added"] == ["hypertension"]
        ((skipped),) = report["skipped"]
        assert skipped["path"] == "cut.pdf"
        assert skipped["reason"].startswith("cut.pdf: ")
        assert "truncated" in skipped["reason"]

        only_bad = await http.post("/v1/corpora/htn/documents", files=files[1:])
        assert only_bad.status_code == 400, only_bad.text
        detail = only_bad.json()["detail"]
        assert detail.startswith("cut.pdf: ") and "truncated" in detail
        text = added.text + only_bad.text
        assert str(tmp_path) not in text and "serve/corpora" not in text
