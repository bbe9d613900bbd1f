"""Render guideline Markdown and JATS articles to HTML, and print them to PDF.

Run as ``python scripts/render_documents.py OUT_DIR SOURCE...``. Each source (``.md`` or
JATS ``.xml``) becomes ``OUT_DIR/<stem>.html`` and, when headless Chromium is
installed, ``<stem>-1col.pdf`` and ``<stem>-2col.pdf``: one- and two-column layouts with
a running header (a table head, which Chromium repeats on every page) and Chromium's own header and
footer lines (date, title, file address and ``n/N`` page numbers).

``--max-chars N`` cuts a Markdown source at the last heading before N characters and
writes the cut source beside the outputs, so small test fixtures keep their source.
The PDF files under ``tests/fixtures/documents`` were made with this script.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.etree.ElementTree import Element

from markdown_it import MarkdownIt

from veriscribe.documents.safexml import parse_xml

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)

_STYLE = """
body { font-family: 'DejaVu Serif', serif; font-size: 10.5pt; line-height: 1.35;
       margin: 0; }
table.page { width: 100%; border-collapse: collapse; table-layout: auto; font-size: inherit; }
table.page > thead > tr > td, table.page > tbody > tr > td { border: 0; padding: 0; }
.running { font-size: 8pt; color: #555; border-bottom: 0.5pt solid #999;
           padding-bottom: 2pt; margin-bottom: 8pt; }
h1 { font-size: 20pt; } h2 { font-size: 15pt; } h3 { font-size: 12.5pt; }
h4, h5, h6 { font-size: 11pt; }
h1, h2, h3, h4, h5, h6 { font-family: 'DejaVu Sans', sans-serif; font-weight: bold;
       break-after: avoid; }
p { text-align: justify; hyphens: auto; margin: 0 0 6pt 0; }
table { border-collapse: collapse; font-size: 9pt; width: 100%; table-layout: fixed;
        overflow-wrap: break-word; }
img { max-width: 100%; }
td, th { border: 0.5pt solid #999; padding: 2pt 4pt; }
"""
_TWO_COLUMNS = "main { column-count: 2; column-gap: 18pt; }"


def markdown_source(path: Path, max_chars: int | None) -> tuple[str, str]:
    """Return the Markdown (cut at a heading when asked) and its title."""
    text = path.read_text(encoding="utf-8")
    title = path.stem
    front = _FRONT_MATTER.match(text)
    if front:
        found = _FRONT_TITLE.search(front.group(1))
        if found:
            title = found.group(1).strip().strip("\"'")
    if max_chars is not None and len(text) > max_chars:
        cut = text.rfind("\n#", 0, max_chars)
        text = text[: cut + 1] if cut > 0 else text[:max_chars]
    return text, title


def markdown_body(text: str) -> str:
    """Render Markdown without its front matter to HTML."""
    front = _FRONT_MATTER.match(text)
    if front:
        text = text[front.end() :]
    rendered: str = MarkdownIt("commonmark").enable("table").render(text)
    return rendered


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1].rsplit(":", 1)[-1] if isinstance(tag, str) else ""


def _flat(element: Element) -> str:
    return html.escape(" ".join("".join(element.itertext()).split()))


def _jats_blocks(element: Element, depth: int, out: list[str]) -> None:
    for child in element:
        name = _local(child.tag)
        if name in {"title", "label"}:
            continue
        if name == "sec":
            title = next((c for c in child if _local(c.tag) == "title"), None)
            label = next((c for c in child if _local(c.tag) == "label"), None)
            heading = _flat(title) if title is not None else ""
            if label is not None and _flat(label):
                heading = f"{_flat(label).rstrip('.')}. {heading}"
            level = min(depth, 6)
            out.append(f"<h{level}>{heading or 'Untitled'}</h{level}>")
            _jats_blocks(child, depth + 1, out)
        elif name == "list":
            items = [_flat(i) for i in child if _local(i.tag) == "list-item"]
            out.append("<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>")
        elif name == "table-wrap":
            rows = []
            for part in child.iter():
                part_name = _local(part.tag)
                if part_name in {"label", "caption"}:
                    out.append(f"<p>{_flat(part)}</p>")
                elif part_name == "tr":
                    cells = "".join(
                        f"<td>{_flat(c)}</td>"
                        for c in part
                        if _local(c.tag) in {"td", "th"}
                    )
                    rows.append(f"<tr>{cells}</tr>")
            out.append("<table>" + "".join(rows) + "</table>")
        else:
            text = _flat(child)
            if text:
                out.append(f"<p>{text}</p>")


def jats_body(path: Path) -> tuple[str, str]:
    """Render a JATS article's title, abstract and body to HTML; return it and the title."""
    root = parse_xml(path.read_bytes(), path)
    title_el = next((e for e in root.iter() if _local(e.tag) == "article-title"), None)
    title = _flat(title_el) if title_el is not None else path.stem
    out = [f"<h1>{title}</h1>"]
    abstract = next((e for e in root.iter() if _local(e.tag) == "abstract"), None)
    if abstract is not None:
        # As the guideline reader reads it: one section, sub-section titles inline.
        out.append("<h2>Abstract</h2>")
        for child in abstract:
            if _local(child.tag) != "title" and _flat(child):
                out.append(f"<p>{_flat(child)}</p>")
    body = next((e for e in root if _local(e.tag) == "body"), None)
    if body is not None:
        _jats_blocks(body, 2, out)
    return "\n".join(out), html.unescape(title)


def page(body: str, title: str, running: str, columns: int) -> str:
    """Wrap a body in a printable page with a running header."""
    style = _STYLE + (_TWO_COLUMNS if columns == 2 else "")
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{style}</style></head><body>"
        # A table's head is repeated on every printed page: the running header.
        "<table class='page'><thead><tr><td>"
        f"<header class='running'>{html.escape(running)}</header>"
        f"</td></tr></thead><tbody><tr><td><main>{body}</main></td></tr></tbody>"
        "</table></body></html>"
    )


def flowing_page(body: str, title: str, columns: int) -> str:
    """Wrap a long body in a printable page without the running-header table.

    Chromium does not break a long multi-column body inside a table cell across
    pages (the columns run off the page's side); here the body flows freely, and
    Chromium's own header and footer lines (date, title, address, ``n/N``) are the
    running lines of every page. A long address is broken inside its column rather than
    printed across the other one.
    """
    style = _STYLE + (_TWO_COLUMNS if columns == 2 else "")
    style += "main { overflow-wrap: anywhere; }"
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{style}</style></head><body>"
        f"<main>{body}</main></body></html>"
    )


def print_pdf(chromium: str, html_path: Path, pdf_path: Path) -> None:
    """Print one HTML file to PDF with headless Chromium."""
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                f"--user-data-dir={profile}",
                f"--print-to-pdf={pdf_path}",
                html_path.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=180,
        )


def main() -> int:
    """Render every source given."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("sources", type=Path, nargs="+")
    parser.add_argument("--max-chars", type=int, default=None)
    parser.add_argument(
        "--columns", default="1,2", help="layouts to print: 1, 2 or 1,2"
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("chromium not found: writing HTML only", file=sys.stderr)
    for source in args.sources:
        if source.suffix.lower() == ".md":
            text, title = markdown_source(source, args.max_chars)
            if args.max_chars is not None:
                (args.out / source.name).write_text(text, encoding="utf-8")
            body = markdown_body(text)
        else:
            body, title = jats_body(source)
        running = f"{title[:70]} \u2014 {source.stem}"
        for columns in (int(c) for c in args.columns.split(",")):
            html_path = args.out / f"{source.stem}-{columns}col.html"
            html_path.write_text(page(body, title, running, columns), encoding="utf-8")
            if chromium is not None:
                pdf_path = args.out / f"{source.stem}-{columns}col.pdf"
                print_pdf(chromium, html_path, pdf_path)
                print(f"{pdf_path} {pdf_path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
