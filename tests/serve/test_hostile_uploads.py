"""Hostile PDFs uploaded to `serve`: each fails in one line, the good upload beside them
is worked on, and the server answers `/healthz` all the while."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx

from crafted_pdfs import PDF_CLASSES, REFUSED, bomb, form_fan_out, reference_loop
from pdf_fuzz import malformed_pdf
from veriscribe.serve import ServeConfig, create_app
from veriscribe.settings import Settings

ARTICLE = b"""# Exercise and blood pressure in older adults

## Methods

We enrolled 120 adults aged 65 to 80 years in a randomised trial of supervised walking.

## Results

Systolic blood pressure fell by 8 mmHg after twelve weeks of walking.
"""
HEALTH_S = 2.0  # the longest /healthz may take while hostile files are read (read on
# the loop, it stalled 3.9 s; a loaded machine stalls a free loop for some 0.5 s)


async def _health_while(http: httpx.AsyncClient, work: asyncio.Task[object]) -> float:
    """Ask /healthz every 0.1 s until ``work`` ends; return the longest stall.

    A stall is how much longer than 0.1 s one round (the pause, then the answer)
    took: an event loop held by reading stalls the pause as much as the request.
    """
    slowest = 0.0
    while not work.done():
        started = time.monotonic()
        await asyncio.sleep(0.1)
        health = await http.get("/healthz")
        assert health.status_code == 200
        slowest = max(slowest, time.monotonic() - started - 0.1)
    return slowest


async def _upload_run(
    tmp_path: Path, files: list[tuple[str, tuple[str, bytes, str]]]
) -> tuple[dict[str, object], float]:
    """Upload articles for a run; return its summary once finished, and the longest
    stall of /healthz meanwhile."""
    app = create_app(
        ServeConfig(settings=Settings(model="sim"), work_dir=tmp_path / "serve")
    )
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http,
    ):
        started = await http.post("/v1/abstracts", files=files)
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]

        async def finished() -> dict[str, object]:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                shown = (await http.get(f"/v1/runs/{run_id}")).json()
                if shown["status"] == "finished":
                    return dict(shown)
                await asyncio.sleep(0.2)
            raise AssertionError("the run did not finish")

        work = asyncio.create_task(finished())
        slowest = await _health_while(http, work)
        return await work, slowest


async def test_hostile_article_uploads_fail_in_one_line_beside_a_good_one(
    tmp_path: Path,
) -> None:
    refused = {f"{n}.pdf": why for n, why in REFUSED.items() if why is not None}
    files = [("files", ("good.md", ARTICLE, "text/markdown"))]
    files += [
        ("files", (name, PDF_CLASSES[name.removesuffix(".pdf")](), "application/pdf"))
        for name in refused
    ]
    summary, slowest = await _upload_run(tmp_path, files)
    assert slowest < HEALTH_S
    assert summary["done"] == 1, summary
    failures = summary["failures"]
    assert isinstance(failures, list)
    reasons = {Path(f["source"]).name: f["reason"] for f in failures}
    assert set(reasons) == set(refused)
    for name, reason in reasons.items():
        assert refused[name] in reason and "\n" not in reason, (name, reason)


async def test_a_hostile_guideline_upload_is_refused_while_healthz_answers(
    tmp_path: Path,
) -> None:
    app = create_app(
        ServeConfig(settings=Settings(model="sim"), work_dir=tmp_path / "serve")
    )
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http,
    ):
        for name, data, reason in [
            ("bomb.pdf", bomb(b"stream\r"), "decompression bomb"),
            ("forms.pdf", form_fan_out(), "fan-out bomb"),
            ("loop.pdf", reference_loop(), "in a loop"),
        ]:
            files = {"files": (name, data, "application/pdf")}
            upload = asyncio.create_task(
                http.post("/v1/corpora/g/documents", files=files)
            )
            slowest = await _health_while(http, upload)
            answer = await upload
            assert slowest < HEALTH_S
            assert 400 <= answer.status_code < 500, answer.text
            detail = answer.json()["detail"]
            assert reason in detail and "\n" not in detail
        good = {"files": ("notes.md", b"# Notes\n\n## Part\n\nGood text.\n")}
        added = await http.post("/v1/corpora/g/documents", files=good)
        assert added.status_code == 200, added.text
        assert added.json()["added"] == ["notes"]


async def test_fuzzed_article_uploads_fail_in_one_line_beside_a_good_one(
    tmp_path: Path,
) -> None:
    files = [("files", ("good.md", ARTICLE, "text/markdown"))]
    files += [
        ("files", (f"seed-{seed}.pdf", malformed_pdf(seed), "application/pdf"))
        for seed in range(0, 1500, 50)
    ]
    summary, slowest = await _upload_run(tmp_path, files)
    assert slowest < HEALTH_S
    assert summary["status"] == "finished" and summary["total"] == len(files)
    failures = summary["failures"]
    assert isinstance(failures, list)
    assert "good.md" not in {Path(f["source"]).name for f in failures}
    for failure in failures:
        reason = failure["reason"] or ""
        assert "\n" not in reason and "VERISCRIBE_READ_" not in reason, failure
