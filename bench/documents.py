"""How well PDF and HTML renderings read back into the section tree of their source.

Run as ``python bench/documents.py [DIR]`` (default ``tests/fixtures/documents``, made by
``scripts/render_documents.py``). Each rendering ``<stem>-<N>col.pdf`` or ``.html`` is
compared with its source ``<stem>.md`` or ``<stem>.xml`` in the same folder, or else
under ``--sources``. Per file it prints:

- headings: how many of the source's section headings the rendering has;
- text_f1: section text token F1, each source section matched to the rendering's
  section of the same title (text under a heading the rendering missed counts as lost);
- header_lines_left: running header, footer and page-number lines left in any section;
- pages and read seconds (PDF).

The last line reads ``files= headings_found= text_f1= header_lines_left= pages_per_s=``.
"""

from __future__ import annotations

import argparse
import difflib
import re
import time
from collections import Counter
from pathlib import Path

from veriscribe.documents.guidelines import GuidelineDoc, read_guideline_path

ROOT = Path(__file__).resolve().parents[1]
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"<[^>]+>")
_TOKEN = re.compile(r"\w+")
_DATE = re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}, \d{1,2}:\d{2}\s?[AP]M\b")
_BARE_NUMBER = re.compile(r"^(?:page\s+)?\d{1,4}(?:\s*(?:/|of)\s*\d{1,4})?$", re.I)


def tokens(text: str) -> list[str]:
    """Lower-case word tokens, Markdown link targets, HTML tags and emphasis left out."""
    plain = _TAG.sub(" ", _LINK.sub(r"\1", text))
    return _TOKEN.findall(plain.replace("_", " ").lower())


def _key(title: str) -> str:
    return " ".join(tokens(title))


def headings_found(source: GuidelineDoc, read: GuidelineDoc) -> tuple[int, int]:
    """Count the source headings the rendering has (titles compared by tokens)."""
    wanted = Counter(_key(s.title) for s in source.sections if s.title != "Preamble")
    have = Counter(_key(s.title) for s in read.sections)
    return sum((wanted & have).values()), sum(wanted.values())


def text_counts(source: GuidelineDoc, read: GuidelineDoc) -> tuple[int, int, int]:
    """Return tokens in common (per matched section), in the rendering, in the source.

    Sections are aligned by title in order (the longest common subsequence of the
    two title lists). A rendering's section left unaligned (a bold line the source
    writes as text) goes back, title and text, to the aligned section before it.
    """
    source_keys = [_key(s.title) for s in source.sections]
    read_keys = [_key(s.title) for s in read.sections]
    pairs: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, read_keys, source_keys, autojunk=False)
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            pairs[block.a + offset] = block.b + offset
    matched: dict[int, Counter[str]] = {}
    last: Counter[str] | None = None
    read_total = 0
    for position, section in enumerate(read.sections):
        words = Counter(tokens(section.text))
        read_total += sum(words.values())
        if position in pairs:
            last = matched[pairs[position]] = words
        elif last is not None:
            title_words = tokens(section.title)
            read_total += len(title_words)
            last.update(title_words)
            last.update(words)
    common = sum(
        sum((Counter(tokens(s.text)) & matched[i]).values())
        for i, s in enumerate(source.sections)
        if i in matched
    )
    source_total = sum(len(tokens(s.text)) for s in source.sections)
    return common, read_total, source_total


def _bare_numbers(doc: GuidelineDoc) -> int:
    return sum(
        1
        for section in doc.sections
        for line in re.split(r"\n+", section.text)
        if _BARE_NUMBER.match(line.strip())
    )


def header_lines_left(
    source: GuidelineDoc, read: GuidelineDoc, running: list[str]
) -> int:
    """Count running header, footer and page-number lines left in the sections.

    Bare numbers the source itself has on a line of their own ("2014") do not count.
    """
    left = max(0, _bare_numbers(read) - _bare_numbers(source))
    for section in read.sections:
        left += len(_DATE.findall(section.text)) + section.text.count("file://")
        left += sum(section.text.count(marker) for marker in running)
    return left


def _source_for(rendering: Path, sources: Path | None) -> Path | None:
    stem = re.sub(r"-\dcol$", "", rendering.stem)
    for folder in (rendering.parent, sources):
        if folder is None:
            continue
        for suffix in (".md", ".xml", ".nxml"):
            candidate = folder / f"{stem}{suffix}"
            if candidate.is_file():
                return candidate
    return None


def main() -> int:
    """Measure every rendering in the folder."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "folder", type=Path, nargs="?", default=ROOT / "tests/fixtures/documents"
    )
    parser.add_argument("--sources", type=Path, default=None)
    args = parser.parse_args()
    renderings = sorted(
        p for p in args.folder.iterdir() if re.search(r"-\dcol\.(pdf|html)$", p.name)
    )
    files = found = wanted = left = pages = 0
    common = read_total = source_total = 0
    seconds = 0.0
    for rendering in renderings:
        source_path = _source_for(rendering, args.sources)
        if source_path is None:
            print(f"{rendering.name}: no source beside it, skipped")
            continue
        source = read_guideline_path(source_path)[0]
        started = time.perf_counter()
        read = read_guideline_path(rendering)[0]
        elapsed = time.perf_counter() - started
        stem = source_path.stem
        running = [f"\u2014 {stem}"]
        got, of = headings_found(source, read)
        same, in_read, in_source = text_counts(source, read)
        lines_left = header_lines_left(source, read, running)
        file_pages = max((s.page or 0) for s in read.sections)
        f1 = 2 * same / (in_read + in_source) if in_read + in_source else 0.0
        print(
            f"{rendering.name}: headings {got}/{of} text_f1={f1:.3f} "
            f"header_lines_left={lines_left} pages={file_pages} read_s={elapsed:.2f}"
        )
        files += 1
        found, wanted, left = found + got, wanted + of, left + lines_left
        common, read_total = common + same, read_total + in_read
        source_total += in_source
        if rendering.suffix == ".pdf":
            pages += file_pages
            seconds += elapsed
    share = found / wanted if wanted else 0.0
    f1_all = (
        2 * common / (read_total + source_total) if read_total + source_total else 0.0
    )
    rate = pages / seconds if seconds else 0.0
    print(
        f"files={files} headings_found={share:.3f} text_f1={f1_all:.3f} "
        f"header_lines_left={left} pages_per_s={rate:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
