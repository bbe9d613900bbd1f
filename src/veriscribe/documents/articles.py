"""Read articles for the abstract job: JATS XML, JSON lines, text, Markdown, PDF, HTML.

Every reader turns its input into :class:`Article` objects: paragraphs in document
order, each with the heading path it sits under, the author abstract (kept apart as the
reference, never part of the paragraphs) and a few metadata strings.

``read_articles`` raises :class:`~veriscribe.errors.InputError` when a single-document
file cannot be used at all (malformed XML, undecodable text, nothing to summarise). A
JSON-lines dataset holds many articles: one bad line yields a :class:`ReadFailure` with
its line number and the reason, and the rest of the file is still read.

XML is parsed by :func:`~veriscribe.documents.safexml.parse_xml`, which refuses entity
declarations (the "billion laughs" and external-entity attacks) from the parser's own
events, before any expansion happens.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from xml.etree.ElementTree import Element

from veriscribe.documents.charsets import decode_page
from veriscribe.documents.jsonl import raw_lines
from veriscribe.documents.limits import check_size, over_limit
from veriscribe.documents.safexml import parse_xml
from veriscribe.documents.sandbox import ReadLimits, run_limited
from veriscribe.documents.tree import (
    Found,
    ShouldStop,
    WalkStopped,
    has_magic,
    match_glob,
    walk_files,
)
from veriscribe.errors import InputError

__all__ = [
    "ARTICLE_SUFFIXES",
    "Article",
    "Paragraph",
    "ReadFailure",
    "WalkStopped",
    "expand_input",
    "expand_inputs",
    "read_articles",
]

XML_SUFFIXES = frozenset({".xml", ".nxml"})
JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown"})
PDF_SUFFIXES = frozenset({".pdf"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
ARTICLE_SUFFIXES = (
    XML_SUFFIXES | JSONL_SUFFIXES | TEXT_SUFFIXES | PDF_SUFFIXES | HTML_SUFFIXES
)

_BLANK_LINES = re.compile(r"\n[ \t]*\n")
_ATX_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_SENTENCE_END = re.compile(r"[.!?:;)\]\"'\u201d\u2019]$")

# Sections that are never abstract material: declarations and lists at the end of a
# paper (BMC and others put them inside <body>), matched on the lower-cased title.
_BACK_MATTER_TITLES = frozenset(
    {
        "abbreviations",
        "acknowledgement",
        "acknowledgements",
        "acknowledgment",
        "acknowledgments",
        "author contributions",
        "authors contributions",
        "authors' contributions",
        "authors\u2019 contributions",
        "availability of data and materials",
        "bibliography",
        "competing interests",
        "conflict of interest",
        "conflicts of interest",
        "consent for publication",
        "data availability",
        "data availability statement",
        "declaration of competing interest",
        "declarations",
        "disclosure",
        "disclosures",
        "ethics approval and consent to participate",
        "ethics statement",
        "financial disclosure",
        "funding",
        "literature cited",
        "references",
        "supplementary material",
        "supplementary materials",
        "supporting information",
    }
)
_BACK_MATTER_SEC_TYPES = frozenset(
    {
        "ack",
        "author-contributions",
        "coi-statement",
        "COI-statement",
        "data-availability",
        "display-objects",
        "funding-information",
        "supplementary-material",
    }
)


def _is_back_matter(title: str) -> bool:
    key = " ".join(title.split()).lower().rstrip(".:")
    return key in _BACK_MATTER_TITLES


@dataclass(frozen=True)
class Paragraph:
    """One body paragraph and the headings it sits under.

    Attributes:
        section: The innermost section title ("" for text before any heading).
        text: The paragraph as plain text, whitespace collapsed.
        path: Every section title from the top level down to ``section``; empty when
            the paragraph is under no heading.
    """

    section: str
    text: str
    path: tuple[str, ...] = ()

    @property
    def top_section(self) -> str:
        """Return the top-level section title, the one header normalisation reads."""
        return self.path[0] if self.path else self.section


@dataclass
class Article:
    """An article ready for the abstract job.

    Attributes:
        id: DOI, PMCID or the dataset's id; the file stem when the input has none.
        source: Where it came from: the file path, with ``:<line>`` for JSON lines.
        title: The article title, or "" when the input has none.
        paragraphs: Body paragraphs in document order; never any abstract text.
        reference: The author abstract as plain text, or None when there is none.
        meta: Small string facts about the input (layout, identifiers, notes).
    """

    id: str
    source: str
    title: str
    paragraphs: list[Paragraph]
    reference: str | None = None
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def body(self) -> str:
        """Return the body text: the paragraphs, separated by blank lines."""
        return "\n\n".join(p.text for p in self.paragraphs)

    @property
    def content_hash(self) -> str:
        """Return the sha256 hex digest of the paragraphs and their headings."""
        digest = hashlib.sha256()
        for paragraph in self.paragraphs:
            record = [list(paragraph.path), paragraph.section, paragraph.text]
            digest.update(json.dumps(record, ensure_ascii=False).encode("utf-8"))
            digest.update(b"\n")
        return digest.hexdigest()


@dataclass(frozen=True)
class ReadFailure:
    """One item of a multi-article input that could not be read.

    Attributes:
        id: The item's id when it could be found, else ``<file stem>:<line>``.
        source: The file path with ``:<line>``.
        reason: One line saying what is wrong.
    """

    id: str
    source: str
    reason: str


# --------------------------------------------------------------------------- inputs


def expand_inputs(inputs: Sequence[str]) -> list[Path]:
    """Expand files, directories (recursively) and glob patterns into article files.

    A file named explicitly is kept whatever its suffix (reading it says whether it is
    usable); files found in directories or by a glob are kept only when their suffix is
    one :func:`read_articles` knows. Directory contents are sorted; duplicates are
    dropped, first occurrence kept. Directory links are never followed, and file
    links only within the tree (see :mod:`veriscribe.documents.tree`).

    Raises:
        InputError: An input that does not exist, a directory holding no article
            file, or a glob that matches nothing.
    """
    found: list[Path] = []
    for item in inputs:
        found.extend(expand_input(item).files)
    unique: dict[Path, None] = {}
    for path in found:
        unique.setdefault(path, None)
    return list(unique)


def expand_input(item: str, *, should_stop: ShouldStop | None = None) -> Found:
    """Expand one file, directory or glob pattern into article files.

    Also returns the file links that were not followed (they lead out of the tree),
    each with the reason. ``should_stop`` is asked between directories; when it
    returns true the walk raises :class:`~veriscribe.documents.tree.WalkStopped`.

    Raises:
        InputError: The input does not exist, is a directory holding no article file
            or a glob that matches nothing, or has too many entries to look through.
    """
    stop = should_stop or (lambda: False)
    path = Path(item)
    if path.is_file():
        return Found([path])
    if path.is_dir():
        found = walk_files(path, _known_suffix, should_stop=stop)
        if not found.files and not found.skipped:
            known = ", ".join(sorted(ARTICLE_SUFFIXES))
            raise InputError(
                f"{item}: the directory holds no article file (looked for {known})"
            )
        return found
    if has_magic(item):
        found = match_glob(item, _known_suffix, should_stop=stop)
        if not found.files and not found.skipped:
            raise InputError(f"{item}: the pattern matches no article file")
        return found
    raise InputError(f"{item}: no such file or directory")


def _known_suffix(path: Path) -> bool:
    return path.suffix.lower() in ARTICLE_SUFFIXES


def read_articles(
    path: Path, *, max_bytes: int | None = None, limits: ReadLimits | None = None
) -> Iterator[Article | ReadFailure]:
    """Yield the articles in a file, chosen by its suffix.

    ``.xml``/``.nxml`` are JATS (one article), ``.jsonl``/``.ndjson`` are datasets (one
    article per line, in the PubMed summarisation, PMC-MAD or sectioned layout), and
    ``.txt``/``.md``/``.markdown`` are plain text or Markdown, ``.pdf`` a PDF and
    ``.html``/``.htm`` a web page (one article each).

    A one-article file is read in a reader process under ``limits`` (None: the
    settings'), see :mod:`veriscribe.documents.sandbox`. JSON lines are read here,
    line by line, each line held to ``max_bytes``.

    Args:
        path: The file.
        max_bytes: Largest single-article file, or JSON-lines record, accepted
            (None: no limit). A file over it is refused before it is read; a record
            over it is a failed item.
        limits: The time budget and memory cap of reading one article file.

    Raises:
        InputError: The file is missing, of an unknown kind, too large, undecodable,
            malformed, has no usable paragraph (for JSON lines: no line at all), or
            runs over the time budget or the memory cap.
            Being a generator, it raises when iteration starts, not when called.
    """
    suffix = path.suffix.lower()
    if suffix not in ARTICLE_SUFFIXES:
        known = ", ".join(sorted(ARTICLE_SUFFIXES))
        raise InputError(f"{path}: unknown kind of file (expected one of {known})")
    if suffix in JSONL_SUFFIXES:
        try:
            # Streamed: the limit is per record, and the file may be any size.
            with path.open("rb") as stream:
                yield from read_jsonl(stream, path, max_bytes=max_bytes)
        except OSError as exc:
            raise InputError(f"{path}: cannot read the file ({exc.strerror})") from exc
        return
    yield run_limited(path, read_article_file, path, max_bytes, limits=limits)


def read_article_file(path: Path, max_bytes: int | None = None) -> Article:
    """Read the one article of a JATS, PDF, web page, text or Markdown file, in place.

    Raises:
        InputError: The file is missing, too large, undecodable or malformed.
    """
    suffix = path.suffix.lower()
    try:
        check_size(path, path.stat().st_size, max_bytes)
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read the file ({exc.strerror})") from exc
    if suffix in XML_SUFFIXES:
        return read_jats(data, path)
    if suffix in PDF_SUFFIXES:
        return read_pdf_article(data, path)
    if suffix in HTML_SUFFIXES:
        return read_html_article(data, path)
    return read_text(data, path)


# ---------------------------------------------------------------------------- JATS

# Elements whose text is never body prose: floats, boxes, formulas' TeX source,
# reference lists and every kind of abstract.
_JATS_SKIP = frozenset(
    {
        "abstract",
        "trans-abstract",
        "boxed-text",
        "fig",
        "fig-group",
        "table-wrap",
        "table-wrap-group",
        "supplementary-material",
        "ref-list",
        "fn-group",
        "tex-math",
        "graphic",
        "media",
        "sub-article",
        "response",
        "label",
        "caption",
        "object-id",
    }
)


def _local(tag: str) -> str:
    return tag.rsplit(":", 1)[-1]


def _collapse(text: str) -> str:
    # The same as replacing each run of ``\s`` with a space and stripping (regex and
    # ``str.split`` share one definition of whitespace), several times faster.
    return " ".join(text.split())


def _inner_text(element: Element) -> str:
    """Return all text inside ``element`` except that of skipped descendants."""
    parts: list[str] = []

    def walk(node: Element) -> None:
        if node.text:
            parts.append(node.text)
        for child in node:
            if _local(child.tag) not in _JATS_SKIP:
                walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(element)
    return _collapse("".join(parts))


def _children(element: Element, name: str) -> list[Element]:
    return [child for child in element if _local(child.tag) == name]


def _first(element: Element | None, *names: str) -> Element | None:
    """Follow a path of child names; return None where it breaks."""
    node = element
    for name in names:
        if node is None:
            return None
        found = _children(node, name)
        node = found[0] if found else None
    return node


def _find_article(root: Element) -> Element | None:
    if _local(root.tag) == "article":
        return root
    for node in root.iter():
        if _local(node.tag) == "article":
            return node
    return None


def _body_paragraphs(body: Element) -> list[Paragraph]:
    paragraphs: list[Paragraph] = []

    def walk(node: Element, path: tuple[str, ...]) -> None:
        for child in node:
            name = _local(child.tag)
            if name in _JATS_SKIP or name == "title":
                continue
            if name == "p":
                text = _inner_text(child)
                if text:
                    section = path[-1] if path else ""
                    paragraphs.append(Paragraph(section, text, path))
            elif name == "sec":
                title_el = _first(child, "title")
                title = _inner_text(title_el) if title_el is not None else ""
                if child.get("sec-type") in _BACK_MATTER_SEC_TYPES or (
                    title and _is_back_matter(title)
                ):
                    continue
                walk(child, path + (title,) if title else path)
            else:
                walk(child, path)

    walk(body, ())
    return paragraphs


def _abstract_text(abstract: Element) -> str:
    """Return an abstract as plain text: one line per paragraph or titled section."""
    lines: list[str] = []

    def section(sec: Element) -> None:
        title_el = _first(sec, "title")
        title = _inner_text(title_el) if title_el is not None else ""
        texts = (_inner_text(p) for p in _children(sec, "p"))
        body = " ".join(t for t in texts if t)
        if body:
            lines.append(f"{title}: {body}" if title else body)
        for sub in _children(sec, "sec"):
            section(sub)

    def walk(node: Element) -> None:
        for child in node:
            name = _local(child.tag)
            if name == "p":
                text = _inner_text(child)
                if text:
                    lines.append(text)
            elif name == "sec":
                section(child)
            elif name in {"list", "list-item", "disp-quote"}:
                walk(child)

    walk(abstract)
    return "\n".join(lines)


def _is_main_abstract(abstract: Element) -> bool:
    kind = abstract.get("abstract-type")
    return kind is None or kind == "structured"


def _jats_id(meta_el: Element | None, path: Path) -> tuple[str, dict[str, str]]:
    ids: dict[str, str] = {}
    if meta_el is not None:
        for node in _children(meta_el, "article-id"):
            kind = node.get("pub-id-type", "other")
            value = _collapse("".join(node.itertext()))
            if value:
                ids.setdefault(kind, value)
    if "pmc" in ids and not ids["pmc"].upper().startswith("PMC"):
        ids["pmc"] = "PMC" + ids["pmc"]
    for kind in ("doi", "pmcid", "pmc", "pmid", "publisher-id"):
        if kind in ids:
            return ids[kind], ids
    if ids:
        return next(iter(ids.values())), ids
    return path.stem, ids


def read_jats(data: bytes, path: Path) -> Article:
    """Read one JATS / PMC article: body paragraphs, title and main abstract.

    Raises:
        InputError: Not well-formed, not an article, or no body paragraph.
    """
    root = parse_xml(data, path)
    article = _find_article(root)
    if article is None:
        raise InputError(f"{path}: no <article> element; is this JATS XML?")
    meta_el = _first(article, "front", "article-meta")
    identifier, ids = _jats_id(meta_el, path)
    title_el = _first(meta_el, "title-group", "article-title")
    title = _inner_text(title_el) if title_el is not None else ""
    abstracts = _children(meta_el, "abstract") if meta_el is not None else []
    main = next((a for a in abstracts if _is_main_abstract(a)), None)
    reference = _abstract_text(main) if main is not None else None
    body = _first(article, "body")
    paragraphs = _body_paragraphs(body) if body is not None else []
    if not paragraphs:
        raise InputError(f"{path}: the article body has no paragraph to summarise")
    meta = {"layout": "jats", "file": str(path)}
    if article.get("article-type"):
        meta["article_type"] = article.get("article-type", "")
    for kind, value in ids.items():
        meta[f"id_{kind}"] = value
    others = [a.get("abstract-type", "") for a in abstracts if a is not main]
    if others:
        meta["other_abstracts"] = ",".join(others)
    return Article(
        id=identifier,
        source=str(path),
        title=title,
        paragraphs=paragraphs,
        reference=reference or None,
        meta=meta,
    )


# --------------------------------------------------------------------- JSON lines


class _BadItem(ValueError):
    """A JSON-lines item that cannot become an article."""


def read_jsonl(
    stream: IO[bytes], path: Path, *, max_bytes: int | None = None
) -> Iterator[Article | ReadFailure]:
    """Yield one article or failure per non-blank line of a JSON-lines dataset.

    The stream is read line by line: a line longer than ``max_bytes`` is a failure,
    skipped without ever being held whole.

    Raises:
        InputError: The file has no non-blank line.
    """
    seen = False
    for record in raw_lines(stream, max_bytes):
        number, raw = record.number, record.data
        if raw is not None and not raw.strip():
            continue
        seen = True
        source = f"{path}:{number}"
        fallback_id = f"{path.stem}:{number}"
        too_large = over_limit(record.size, max_bytes)
        if too_large is not None or raw is None:
            yield ReadFailure(fallback_id, source, f"record of {too_large}")
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield ReadFailure(fallback_id, source, f"not UTF-8 ({exc.reason})")
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            yield ReadFailure(fallback_id, source, f"invalid JSON ({exc.msg})")
            continue
        except RecursionError:
            yield ReadFailure(fallback_id, source, "JSON nested too deeply to be read")
            continue
        if not isinstance(item, dict):
            yield ReadFailure(fallback_id, source, "not a JSON object")
            continue
        identifier = _item_id(item) or fallback_id
        try:
            yield _article_from_item(item, identifier, source)
        except _BadItem as exc:
            yield ReadFailure(identifier, source, str(exc))
    if not seen:
        raise InputError(f"{path}: the JSON-lines file has no article")


def _item_id(item: Mapping[str, Any]) -> str | None:
    for key in ("article_id", "id", "doi", "pmcid", "pmid"):
        value = item.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            text = str(value).strip()
            if text:
                return text
    return None


def _strings(value: Any, what: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise _BadItem(f"{what} is neither a string nor a list of strings")


def _article_from_item(
    item: Mapping[str, Any], identifier: str, source: str
) -> Article:
    if "article_text" in item or "abstract_text" in item:
        layout = "pubmed"
        paragraphs = _pubmed_paragraphs(item)
        reference = _pubmed_abstract(item.get("abstract_text"))
    elif _is_heading_sections(item.get("sections")):
        layout = "sectioned"
        paragraphs = _heading_section_paragraphs(item["sections"])
        reference = _plain_abstract(item.get("abstract"))
    elif "sections" in item or "full_text" in item:
        layout = "pmc-mad"
        paragraphs = _pmc_mad_paragraphs(item)
        reference = _plain_abstract(item.get("abstract"))
    else:
        raise _BadItem(
            "unknown layout: expected article_text/sections (PubMed summarisation), "
            "sections/full_text (PMC-MAD) or sections with heading/text"
        )
    if not paragraphs:
        raise _BadItem("no paragraph to summarise")
    title = item.get("title")
    meta = {"layout": layout}
    for key in ("doi", "pmcid", "pmid", "article_type", "file"):
        value = item.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and value:
            meta[key] = str(value)
    return Article(
        id=identifier,
        source=source,
        title=_collapse(title) if isinstance(title, str) else "",
        paragraphs=paragraphs,
        reference=reference,
        meta=meta,
    )


# Sentences of the PubMed summarisation data are packed into paragraphs of about this
# many characters: the layout has no paragraph breaks, and one-sentence "paragraphs"
# would make first-sentence labelling label every sentence.
_PACK_CHARS = 600


def _pack(sentences: Sequence[str]) -> list[str]:
    packed: list[str] = []
    current: list[str] = []
    size = 0
    for sentence in sentences:
        text = _collapse(sentence)
        if not text:
            continue
        current.append(text)
        size += len(text) + 1
        if size >= _PACK_CHARS:
            packed.append(" ".join(current))
            current, size = [], 0
    if current:
        packed.append(" ".join(current))
    return packed


def _named_sections(item: Mapping[str, Any]) -> list[tuple[int, str, Any]]:
    """Return each of ``sections`` with its index and title (from ``section_names``).

    The layouts with these two lists (PubMed, PMC MAD) name section ``i`` by the
    ``i``-th name; an item without sections gives an empty list.
    """
    sections = item.get("sections")
    names = item.get("section_names") or []
    if not isinstance(names, list):
        raise _BadItem("section_names is not a list")
    if not (isinstance(sections, list) and sections):
        return []
    named = []
    for index, section in enumerate(sections):
        name = names[index] if index < len(names) else ""
        named.append((index, _collapse(name) if isinstance(name, str) else "", section))
    return named


def _pubmed_paragraphs(item: Mapping[str, Any]) -> list[Paragraph]:
    named = _named_sections(item)
    if not named:
        sentences = _strings(item.get("article_text", []), "article_text")
        return [Paragraph("", t) for t in _pack(sentences)]
    paragraphs: list[Paragraph] = []
    for index, title, section in named:
        sentences = _strings(section, f"sections[{index}]")
        if title and _is_back_matter(title):
            continue
        path = (title,) if title else ()
        paragraphs.extend(Paragraph(title, t, path) for t in _pack(sentences))
    return paragraphs


def _pubmed_abstract(value: Any) -> str | None:
    if value is None:
        return None
    sentences = _strings(value, "abstract_text")
    cleaned = [_collapse(s.replace("<S>", " ").replace("</S>", " ")) for s in sentences]
    text = " ".join(s for s in cleaned if s)
    return text or None


def _is_heading_sections(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(s, dict) and "text" in s for s in value)
    )


def _looks_like_heading(block: str) -> bool:
    """Tell a short title-like line from a paragraph (no end punctuation, few words)."""
    return (
        "\n" not in block.strip()
        and len(block) <= 100
        and len(block.split()) <= 12
        and not _SENTENCE_END.search(block.strip())
    )


def _text_blocks(text: str) -> list[str]:
    """Split a section's text into paragraphs: blank lines, else single newlines."""
    blocks = [b for b in _BLANK_LINES.split(text.strip()) if b.strip()]
    if len(blocks) == 1 and "\n" in blocks[0]:
        blocks = [b for b in blocks[0].split("\n") if b.strip()]
    return blocks


def _section_paragraphs(title: str, text: str) -> list[Paragraph]:
    """Turn a section's text into paragraphs, short title-like lines as subheadings."""
    top = _collapse(title)
    if top and _is_back_matter(top):
        return []
    base: tuple[str, ...] = (top,) if top else ()
    path = base
    paragraphs: list[Paragraph] = []
    blocks = _text_blocks(text)
    for index, block in enumerate(blocks):
        collapsed = _collapse(block)
        followed = index + 1 < len(blocks)
        if followed and _looks_like_heading(collapsed):
            path = base + (collapsed,)
            continue
        section = path[-1] if path else ""
        paragraphs.append(Paragraph(section, collapsed, path))
    return paragraphs


def _heading_section_paragraphs(sections: list[dict[str, Any]]) -> list[Paragraph]:
    paragraphs: list[Paragraph] = []
    for index, section in enumerate(sections):
        heading = section.get("heading", section.get("title", ""))
        text = section.get("text")
        if not isinstance(text, str) or not isinstance(heading, str | None):
            raise _BadItem(f"sections[{index}] has no text string")
        paragraphs.extend(_section_paragraphs(heading or "", text))
    return paragraphs


def _pmc_mad_paragraphs(item: Mapping[str, Any]) -> list[Paragraph]:
    named = _named_sections(item)
    if not named:
        full_text = item.get("full_text")
        if isinstance(full_text, list):
            full_text = "\n\n".join(_strings(full_text, "full_text"))
        if not isinstance(full_text, str):
            raise _BadItem("neither sections nor full_text holds text")
        return _section_paragraphs("", full_text)
    paragraphs: list[Paragraph] = []
    for index, title, section in named:
        if isinstance(section, str):
            paragraphs.extend(_section_paragraphs(title, section))
        elif not (title and _is_back_matter(title)):
            blocks = _strings(section, f"sections[{index}]")
            path = (title,) if title else ()
            paragraphs.extend(
                Paragraph(title, t, path) for t in map(_collapse, blocks) if t
            )
    return paragraphs


def _plain_abstract(value: Any) -> str | None:
    """Return an abstract string with its structure kept as ``Heading: text`` lines."""
    if value is None:
        return None
    if isinstance(value, list):
        value = "\n\n".join(_strings(value, "abstract"))
    if not isinstance(value, str):
        raise _BadItem("abstract is not a string")
    lines: list[str] = []
    pending = ""
    blocks = _text_blocks(value)
    for index, block in enumerate(blocks):
        text = _collapse(block)
        if index + 1 < len(blocks) and _looks_like_heading(text):
            pending = text
            continue
        lines.append(f"{pending}: {text}" if pending else text)
        pending = ""
    return "\n".join(lines) or None


# ------------------------------------------------------------------ text, Markdown


def decode_text(data: bytes, path: Path) -> tuple[str, str]:
    """Decode a text file; return the text and the encoding used.

    UTF-8 (with or without BOM) and UTF-16 with a BOM are read as such. Anything else
    is tried as Windows-1252, the usual encoding of text saved by older Windows
    programs; the caller records that guess in the article's metadata.

    Raises:
        InputError: Binary data, or bytes that no supported encoding decodes.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: invalid UTF-16 text ({exc.reason})") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\x00" in data:
        raise InputError(f"{path}: binary data, not a text file")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        utf8_error = exc
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        raise InputError(
            f"{path}: not UTF-8 text (byte 0x{data[utf8_error.start]:02x} at offset "
            f"{utf8_error.start}); save it as UTF-8"
        ) from None


def read_text(data: bytes, path: Path) -> Article:
    """Read a plain-text or Markdown article: blank-line paragraphs, ``#`` headings.

    A lone level-1 heading at the top is the title. A section titled "Abstract" is
    the reference, not input.

    Raises:
        InputError: Undecodable, or no paragraph outside headings and the abstract.
    """
    text, encoding = decode_text(data, path)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    blocks = [b.strip("\n") for b in _BLANK_LINES.split(text) if b.strip()]
    entries: list[tuple[int, str]] = []  # (heading level or 0 for a paragraph, text)
    for block in blocks:
        pending: list[str] = []
        for line in block.split("\n"):
            match = _ATX_HEADING.match(line.strip())
            if match:
                if pending:
                    entries.append((0, " ".join(pending)))
                    pending = []
                entries.append((len(match.group(1)), _collapse(match.group(2))))
            else:
                pending.append(line)
        if pending:
            entries.append((0, " ".join(pending)))

    paragraphs, title, abstract = _from_entries(entries)
    if not paragraphs:
        raise InputError(f"{path}: no paragraph to summarise")
    meta = {
        "layout": "markdown" if path.suffix.lower() != ".txt" else "text",
        "file": str(path),
        "encoding": encoding,
    }
    if encoding == "cp1252":
        meta["note"] = "not UTF-8: decoded as Windows-1252"
    return Article(
        id=path.stem,
        source=str(path),
        title=title,
        paragraphs=paragraphs,
        reference="\n".join(abstract) or None,
        meta=meta,
    )


def _from_entries(
    entries: list[tuple[int, str]],
) -> tuple[list[Paragraph], str, list[str]]:
    """Turn (heading level or 0, text) entries into paragraphs, title and abstract.

    A lone level-1 heading at the top is the title; text under a heading "Abstract"
    is the reference; back matter is left out.
    """
    entries = list(entries)
    title = ""
    level_one = [e for e in entries if e[0] == 1]
    if len(level_one) == 1 and entries[0][0] == 1:
        title = entries.pop(0)[1]

    stack: list[tuple[int, str]] = []
    paragraphs: list[Paragraph] = []
    abstract: list[str] = []
    for level, content in entries:
        if level:
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, content))
            continue
        paragraph_text = _collapse(content)
        if not paragraph_text:
            continue
        path_titles = tuple(t for _, t in stack)
        if path_titles and path_titles[0].strip().lower().rstrip(":") == "abstract":
            abstract.append(paragraph_text)
            continue
        if any(_is_back_matter(t) for t in path_titles):
            continue
        section = path_titles[-1] if path_titles else ""
        paragraphs.append(Paragraph(section, paragraph_text, path_titles))
    return paragraphs, title, abstract


# ------------------------------------------------------------------------ PDF, HTML


def read_pdf_article(data: bytes, path: Path) -> Article:
    """Read a PDF article: headings from the layout, the Abstract as the reference.

    Raises:
        InputError: The PDF cannot be read (see :func:`veriscribe.documents.pdf.read_pdf`)
            or has no paragraph to summarise.
    """
    from veriscribe.documents.pdf import read_pdf

    read = read_pdf(data, path)
    entries = [(block.level, _collapse(block.text)) for block in read.blocks]
    paragraphs, title, abstract = _from_entries(entries)
    if not paragraphs:
        raise InputError(f"{path}: no paragraph to summarise")
    meta = {"layout": "pdf", "file": str(path), "pages": str(read.pages)}
    return Article(
        id=path.stem,
        source=str(path),
        title=title or read.title,
        paragraphs=paragraphs,
        reference="\n".join(abstract) or None,
        meta=meta,
    )


def read_html_article(data: bytes, path: Path) -> Article:
    """Read an article web page: main content only, ``h1``-``h6`` as headings.

    The page is decoded by its byte order mark or the charset it declares, else as
    :func:`decode_text` decodes text.

    Raises:
        InputError: Undecodable, or no paragraph to summarise.
    """
    from veriscribe.documents.guidelines import parse_html

    text, encoding = decode_page(data, path) or decode_text(data, path)
    parsed = parse_html(text)
    entries: list[tuple[int, str]] = []
    for level, heading, parts in [(0, "", parsed.preamble), *parsed.nodes]:
        if level:
            entries.append((level, _collapse(heading)))
        for block in _BLANK_LINES.split("".join(parts)):
            if block.strip():
                entries.append((0, _collapse(block)))
    paragraphs, title, abstract = _from_entries(entries)
    if not paragraphs:
        raise InputError(f"{path}: no paragraph to summarise")
    meta = {"layout": "html", "file": str(path), "encoding": encoding}
    return Article(
        id=path.stem,
        source=str(path),
        title=title or _collapse(parsed.title),
        paragraphs=paragraphs,
        reference="\n".join(abstract) or None,
        meta=meta,
    )
