"""Edges of the guideline readers: repeated headings, declared encodings."""

from __future__ import annotations

import time
from pathlib import Path

from veriscribe.documents.guidelines import read_guideline_path


def test_a_heading_repeated_20000_times_reads_in_linear_time(tmp_path: Path) -> None:
    page = tmp_path / "repeats.md"
    page.write_text("".join(f"## Dose\n\nStep {i}.\n\n" for i in range(20_000)))
    started = time.perf_counter()
    (doc,) = read_guideline_path(page)
    seconds = time.perf_counter() - started
    ids = [section.section_id for section in doc.sections]
    assert ids[:3] == ["dose", "dose-2", "dose-3"] and ids[-1] == "dose-20000"
    assert len(set(ids)) == 20_000
    # Half a second here; finding each repeat's suffix from 2 again took 36 s.
    assert seconds < 10, seconds
