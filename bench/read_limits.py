"""What reading each file in a reader process costs, over reading it in place.

Run as ``python bench/read_limits.py [FILE_OR_DIR ...]`` (default: the development JATS
articles). It reads every file ``--rounds`` times in place, then as ``read_articles``
does, in a reader process under the time budget and memory cap, and prints the time
to start a reader and the median overhead per file.

The last line reads ``files= start_s= in_place_ms= limited_ms= overhead_ms=``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from veriscribe.documents import sandbox
from veriscribe.documents.articles import (
    expand_inputs,
    read_article_file,
    read_articles,
)

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "articles" / "jats"


def main() -> None:
    """Measure and print the per-file overhead of the reader process."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="*", default=[str(DEFAULT)])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    files = expand_inputs(args.inputs)
    limits = sandbox.ReadLimits.from_settings()

    started = time.perf_counter()
    sandbox.run_limited("start", len, b"", limits=limits)
    start_s = time.perf_counter() - started

    in_place: list[float] = []
    limited: list[float] = []
    for _ in range(args.rounds):
        for path in files:
            started = time.perf_counter()
            read_article_file(path)
            in_place.append(time.perf_counter() - started)
            started = time.perf_counter()
            list(read_articles(path, limits=limits))
            limited.append(time.perf_counter() - started)
    overheads = [b - a for a, b in zip(in_place, limited, strict=True)]
    for path, a, b in zip(files, in_place, limited, strict=False):
        print(f"{path.name}: in place {a * 1000:.1f} ms, limited {b * 1000:.1f} ms")
    print(
        f"files={len(files)} start_s={start_s:.2f} "
        f"in_place_ms={statistics.median(in_place) * 1000:.1f} "
        f"limited_ms={statistics.median(limited) * 1000:.1f} "
        f"overhead_ms={statistics.median(overheads) * 1000:.1f}"
    )


if __name__ == "__main__":
    main()
