"""The PDF reader against malformed files drawn at random: each read or refused in one
line, within a time and memory bound per file, never by the bound itself."""

from __future__ import annotations

import os
import time

from pdf_fuzz import malformed_pdf
from veriscribe.documents.pdf import PdfText, read_pdf
from veriscribe.documents.sandbox import ReadLimits, run_limited
from veriscribe.errors import InputError

CASES = int(os.environ.get("VERISCRIBE_PDF_FUZZ_CASES", "1500"))
"""Files drawn (seeds 0 to CASES - 1): about a minute on two cores."""

LIMITS = ReadLimits(timeout_s=10, memory_mb=1024)
"""Each file's bound: the reader must finish well inside it."""


def test_malformed_pdfs_are_read_or_refused_in_one_line() -> None:
    problems: list[str] = []
    outcomes = {"read": 0, "refused": 0}
    slowest = (0.0, -1)
    for seed in range(CASES):
        data = malformed_pdf(seed)
        name = f"seed-{seed}.pdf"
        started = time.monotonic()
        try:
            read = run_limited(name, read_pdf, data, name, limits=LIMITS)
        except InputError as exc:
            message = str(exc)
            if "VERISCRIBE_READ_" in message:
                problems.append(f"{seed}: only the process limit stopped it: {message}")
            elif "\n" in message or not message.startswith(name):
                problems.append(f"{seed}: not one line naming the file: {message!r}")
            outcomes["refused"] += 1
        except Exception as exc:  # any other kind is a reader bug
            problems.append(f"{seed}: {type(exc).__name__}: {exc}")
        else:
            assert isinstance(read, PdfText)
            outcomes["read"] += 1
        slowest = max(slowest, (time.monotonic() - started, seed))
    print(f"{CASES} cases: {outcomes}, slowest {slowest[0]:.2f} s (seed {slowest[1]})")
    assert problems == []
    # The generator draws both kinds: a fuzz test that only ever refuses tests little.
    assert min(outcomes.values()) >= CASES // 20
