"""Read guideline documents into trees of sections.

Supported inputs, chosen by file name:

* Markdown (``.md``, ``.markdown``): ATX headings ``#`` to ``######``; a section's text
  is what sits directly under its heading, without its sub-sections. YAML front
  matter may give the document title. HTML comments are dropped.
* ``*.sections.json``: an outline with a ``title`` and a list of ``sections``, each
  with ``level``, ``title``, ``text`` (and ``page``); entries may also nest their
  sub-sections in ``children``, and may name themselves with ``id`` or
  ``section_id``.
* ``passages.jsonl`` (cpgQA): one section per line, ``section_id`` = ``passage_id``;
  the document is named after the folder holding the file.
* HTML (``.html``, ``.htm``): headings ``h1`` to ``h6``; only the main content (the
  ``main`` element when there is one): scripts, styles, navigation, page headers and
  footers, asides and cookie or consent banners are dropped. A page is decoded by its
  byte order mark or the charset its ``<meta>`` declares, else as UTF-8.
* PDF (``.pdf``): headings recovered from font size, weight and numbering, running
  headers, footers and page numbers dropped (see :mod:`veriscribe.documents.pdf`);
  every section records the page it starts on.
* JATS XML (``.xml``, ``.nxml``): ``sec`` elements under ``body``, with their
  ``title``, ``label`` and paragraphs; the abstract becomes a section of its own.
* Plain text (``.txt``): one section, or for long texts consecutive paragraphs
  grouped into parts.

Section ids: names the source gives (``passage_id``, ids in ``sections.json``) are kept;
otherwise an id is the slug path of the section's heading titles, such as
``introduction/scope``, with ``-2``, ``-3`` added to repeats. When the outline has a
single top heading that holds all the others (a document title written as a heading),
that heading is the root: it is left unnumbered and out of its descendants' paths.
Section numbers come from the heading when it starts with one ("2.3", "II.", "A."),
else from the position in the tree ("2.3.1"). ``level`` is the depth in the tree,
1 for top-level sections.

Reading a directory reads every supported file below it, in name order, except that a
Markdown file with a ``.sections.json`` of the same stem beside it is skipped (the
outline is the better-structured rendering of the same document), as are license and
read-me files.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from veriscribe.documents.charsets import decode_page
from veriscribe.documents.limits import check_size
from veriscribe.documents.pdf import iter_sections, read_pdf
from veriscribe.documents.safexml import parse_xml
from veriscribe.documents.sandbox import ReadLimits, run_limited
from veriscribe.documents.tree import walk_files
from veriscribe.errors import InputError

PLAIN_TEXT_SINGLE_SECTION_CHARS = 4000
"""Plain texts up to this length become one section; longer ones are split in parts."""

PLAIN_TEXT_PART_CHARS = 3000
"""Target length of the parts a long plain text is grouped into."""

_SKIPPED_STEMS = ("license", "licence", "readme", "copying", "notice", "changelog")
_SLUG_MAX = 60

_OWN_NUMBER = re.compile(
    r"^\s*(?:(?:section|chapter|part)\s+)?"
    r"(?P<num>\d{1,3}(?:\.\d{1,3})*(?=[.)]?\s)|[IVXLCDM]{1,6}(?=[.)]\s)|[A-Za-z](?=[.)]\s))"
    r"[.)]?\s+(?=\S)",
    re.IGNORECASE,
)
_MD_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_MD_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_SPACES = re.compile(r"[ \t\r\f\v]+")


@dataclass
class Section:
    """One node of a guideline's section tree.

    Attributes:
        doc_id: The document the section belongs to.
        section_id: The section's id, unique within the document.
        number: The section number ("2.3.1", "II", "A"), or "" when it has none.
        title: The heading, without its number.
        parent: The parent's ``section_id``, or ``None`` for a top-level section.
        children: The ``section_id`` of each direct sub-section, in order.
        text: The plain text directly under the heading, without sub-sections.
        level: The depth in the tree, 1 for a top-level section.
        page: The page the section starts on, for sources with pages (PDF), else
            ``None``.
    """

    doc_id: str
    section_id: str
    number: str
    title: str
    parent: str | None
    children: list[str]
    text: str
    level: int
    page: int | None = None

    @property
    def chars(self) -> int:
        """The length of the section text in characters."""
        return len(self.text)


@dataclass
class GuidelineDoc:
    """A guideline document and its sections, in reading order.

    Attributes:
        doc_id: A slug naming the document; unique within a corpus.
        title: The document title.
        source: Where the document was read from.
        sections: Every section, parents before their children, in reading order.
    """

    doc_id: str
    title: str
    source: str
    sections: list[Section]

    @property
    def content_hash(self) -> str:
        """A SHA-256 of the id, title and sections (not the source path).

        A section's page counts only when it has one, so that the hash of a document
        without pages is the one it had before pages were stored (adding it again
        changes nothing), while a PDF stored before then is stored again with them.
        """
        payload = {
            "doc_id": self.doc_id,
            "title": self.title,
            "sections": [
                [s.section_id, s.number, s.title, s.parent, s.children, s.level, s.text]
                + ([] if s.page is None else [s.page])
                for s in self.sections
            ],
        }
        data = json.dumps(payload, ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(data.encode("utf-8")).hexdigest()

    def section(self, section_id: str) -> Section | None:
        """Return the section with this id, or ``None``."""
        for candidate in self.sections:
            if candidate.section_id == section_id:
                return candidate
        return None


def slugify(text: str, *, fallback: str = "section") -> str:
    """Make a lower-case ASCII slug of words joined by hyphens."""
    ascii_text = (
        unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    )
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) > _SLUG_MAX:
        cut = slug[:_SLUG_MAX]
        slug = cut.rsplit("-", 1)[0] if "-" in cut else cut
    return slug or fallback


def split_heading_number(heading: str) -> tuple[str, str]:
    """Split a heading into its own number (or "") and its title."""
    heading = " ".join(heading.split())
    match = _OWN_NUMBER.match(heading)
    if match is None:
        return "", heading
    return match.group("num"), heading[match.end() :].strip()


def read_guideline_path(
    path: Path,
    *,
    on_error: Callable[[Path, InputError], None] | None = None,
    max_bytes: int | None = None,
    limits: ReadLimits | None = None,
) -> list[GuidelineDoc]:
    """Read a guideline file, or every guideline file under a directory.

    Each file is read in a reader process under ``limits`` (None: the settings'),
    see :mod:`veriscribe.documents.sandbox`.

    Args:
        path: A file, or a directory read recursively (never through a directory
            link; a file link only when it stays inside the directory).
        on_error: For directories, called with each file that cannot be read, which
            is then skipped; without it the first such file raises.
        max_bytes: Largest file accepted (None: no limit); a larger one cannot be
            read, and is refused before it is.
        limits: The time budget and memory cap of reading one file.

    Returns:
        The documents read, with doc ids unique among them.

    Raises:
        InputError: The path does not exist, is of an unsupported type, too large,
            or (without ``on_error``) a file in it has no usable text, cannot be
            parsed or runs over the time budget or the memory cap.
    """
    if path.is_dir():
        return _read_directory(path, on_error, max_bytes, limits)
    if not path.is_file():
        raise InputError(f"{path}: no such file or directory")
    return [_read_file(path, max_bytes, limits)]


def _read_directory(
    root: Path,
    on_error: Callable[[Path, InputError], None] | None,
    max_bytes: int | None,
    limits: ReadLimits | None,
) -> list[GuidelineDoc]:
    docs: list[GuidelineDoc] = []
    seen = UniqueNames()
    found = walk_files(root, lambda p: not _hidden(p, root))
    for link, reason in found.skipped:
        if on_error is None:
            raise InputError(f"{link}: {reason}")
        on_error(link, InputError(f"{link}: {reason}"))
    for file in _guideline_files(found.files):
        try:
            doc = _read_file(file, max_bytes, limits)
        except InputError as exc:
            if on_error is None:
                raise
            on_error(file, exc)
            continue
        doc.doc_id = seen.take(doc.doc_id)
        for section in doc.sections:
            section.doc_id = doc.doc_id
        docs.append(doc)
    if not docs:
        raise InputError(f"{root}: no readable guideline files found")
    return docs


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def _guideline_files(files: list[Path]) -> Iterator[Path]:
    """Yield the guideline files among a directory's files (sorted), in order."""
    outlines = {
        (p.parent, p.name[: -len(".sections.json")])
        for p in files
        if p.name.endswith(".sections.json")
    }
    for file in files:
        kind = _kind(file)
        if kind is None or kind == "json":
            continue
        if kind == "jsonl" and not file.name.endswith("passages.jsonl"):
            continue
        if file.stem.lower().startswith(_SKIPPED_STEMS):
            continue
        if kind == "markdown" and (file.parent, file.stem) in outlines:
            continue
        yield file


def _kind(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(".sections.json"):
        return "outline"
    return {
        ".md": "markdown",
        ".markdown": "markdown",
        ".json": "json",
        ".jsonl": "jsonl",
        ".html": "html",
        ".htm": "html",
        ".xml": "jats",
        ".nxml": "jats",
        ".txt": "text",
        ".pdf": "pdf",
    }.get(path.suffix.lower())


def _read_file(
    path: Path, max_bytes: int | None = None, limits: ReadLimits | None = None
) -> GuidelineDoc:
    if _kind(path) is None:
        raise InputError(f"{path}: unsupported guideline file type {path.suffix!r}")
    return run_limited(path, read_guideline_file, path, max_bytes, limits=limits)


def read_guideline_file(path: Path, max_bytes: int | None = None) -> GuidelineDoc:
    """Read one guideline file, in place (no time budget, no memory cap).

    Raises:
        InputError: The file is of an unsupported type, too large, has no usable
            text or cannot be parsed.
    """
    kind = _kind(path)
    if kind is None:
        raise InputError(f"{path}: unsupported guideline file type {path.suffix!r}")
    try:
        check_size(path, path.stat().st_size, max_bytes)
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from exc
    if kind == "pdf":
        doc = _from_pdf(path, _read_bytes(path))
        if not any(section.text.strip() for section in doc.sections):
            raise InputError(f"{path}: no usable text")
        return doc
    raw = _read_text(path, kind)
    try:
        doc = _parse(kind, path, raw)
    except RecursionError:
        # JSON nested past what the parser and the outline walk can hold (XML is
        # refused at a fixed depth by parse_xml).
        raise InputError(f"{path}: nested too deeply to be read") from None
    if not any(section.text.strip() for section in doc.sections):
        raise InputError(f"{path}: no usable text")
    return doc


def _parse(kind: str, path: Path, raw: str) -> GuidelineDoc:
    if kind == "markdown":
        return _from_markdown(path, raw)
    if kind in ("outline", "json"):
        return _from_outline(path, raw)
    if kind == "jsonl":
        return _from_passages(path, raw)
    if kind == "html":
        return _from_html(path, raw)
    if kind == "jats":
        return _from_jats(path, raw)
    return _from_text(path, raw)


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from exc


def _read_text(path: Path, kind: str) -> str:
    if kind == "html":
        return _read_page(path)
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from exc


def _read_page(path: Path) -> str:
    """Read a web page in its byte order mark's or declared charset, else in UTF-8."""
    data = _read_bytes(path)
    found = decode_page(data, path)
    if found is not None:
        return found[0]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: not UTF-8 text ({exc.reason}) and no charset declared; save it "
            'as UTF-8 or declare its charset (<meta charset="windows-1252">)'
        ) from None


def _doc_id_from_stem(path: Path) -> str:
    name = path.name
    if name.lower().endswith(".sections.json"):
        name = name[: -len(".sections.json")]
    else:
        name = path.stem
    return slugify(name, fallback="document")


# --- building the tree ----------------------------------------------------------------


@dataclass
class _Node:
    title: str
    depth: int
    text: str = ""
    given_id: str | None = None
    numbered: bool = True
    page: int | None = None
    children: list[_Node] = field(default_factory=list)


def _nest(entries: Iterable[_Node]) -> list[_Node]:
    """Nest a flat list of nodes into a tree by their depth (heading level)."""
    roots: list[_Node] = []
    stack: list[_Node] = []
    for node in entries:
        while stack and stack[-1].depth >= node.depth:
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    return roots


def _assemble(
    path: Path, doc_id: str, title: str, roots: list[_Node], *, fallback: str = ""
) -> GuidelineDoc:
    """Number the tree, give every node an id and flatten it into sections."""
    title_roots = _title_roots(roots)
    if title_roots:
        title = title or split_heading_number(title_roots[0].title)[1]
    sections: list[Section] = []
    used = UniqueNames()

    def walk(
        nodes: list[_Node], parent: Section | None, prefix: str, path_slugs: list[str]
    ) -> list[str]:
        ids: list[str] = []
        position = 0
        for node in nodes:
            own, clean_title = split_heading_number(node.title)
            if node.numbered:
                position += 1
                number = own or (f"{prefix}.{position}" if prefix else str(position))
            else:
                number = ""
            slug = slugify(clean_title or node.title)
            wanted = node.given_id or "/".join([*path_slugs, slug])
            section = Section(
                doc_id=doc_id,
                section_id=used.take(wanted),
                number=number,
                title=clean_title or node.title,
                parent=parent.section_id if parent else None,
                children=[],
                text=node.text,
                level=(parent.level + 1) if parent else 1,
                page=node.page,
            )
            sections.append(section)
            ids.append(section.section_id)
            is_root = any(node is root for root in title_roots)
            child_paths = path_slugs if is_root else [*path_slugs, slug]
            section.children = walk(node.children, section, number, child_paths)
        return ids

    walk(roots, None, "", [])
    return GuidelineDoc(
        doc_id=doc_id,
        title=title or fallback or doc_id,
        source=str(path),
        sections=sections,
    )


def _title_roots(roots: list[_Node]) -> list[_Node]:
    """Find the headings that only wrap the whole document, and unnumber them.

    A single top heading holding all the others is the document title written as a
    heading. If it has no text of its own and a single sub-heading holding the rest,
    that sub-heading wraps the document too, and so on down.
    """
    found: list[_Node] = []
    candidates = [r for r in roots if r.numbered]
    while len(candidates) == 1 and candidates[0].children:
        node = candidates[0]
        node.numbered = False
        found.append(node)
        if node.text.strip():
            break
        candidates = [c for c in node.children if c.numbered]
    return found


class UniqueNames:
    """Hand out names unique among those given so far: ``x``, then ``x-2``, ``x-3``."""

    def __init__(self) -> None:
        self._taken: set[str] = set()
        # Where the search for a free suffix of each name goes on: a page repeating
        # one heading 50,000 times then costs 50,000 steps, not 50,000²/2.
        self._next: dict[str, int] = {}

    def take(self, wanted: str) -> str:
        """Return ``wanted``, or the first ``wanted-N`` (N from 2) not given yet."""
        candidate = wanted
        suffix = self._next.get(wanted, 2)
        while candidate in self._taken:
            candidate = f"{wanted}-{suffix}"
            suffix += 1
        self._next[wanted] = suffix
        self._taken.add(candidate)
        return candidate


def _clean_block(text: str) -> str:
    """Trim a block of text and squeeze runs of blank lines to one."""
    return _BLANK_LINES.sub("\n\n", text).strip()


# --- Markdown -------------------------------------------------------------------------


def _from_markdown(path: Path, raw: str) -> GuidelineDoc:
    text = raw.replace("\r\n", "\n")
    title = ""
    front = _FRONT_MATTER.match(text)
    if front:
        found = _FRONT_TITLE.search(front.group(1))
        if found:
            title = found.group(1).strip().strip("\"'").strip()
        text = text[front.end() :]
    text = _HTML_COMMENT.sub("", text)

    preamble: list[str] = []
    collected: list[tuple[_Node, list[str]]] = []
    lines = preamble
    in_fence = False
    for line in text.split("\n"):
        if _MD_FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _MD_HEADING.match(line)
        if heading is None:
            lines.append(line)
            continue
        lines = []
        node = _Node(title=heading.group(2).strip(), depth=len(heading.group(1)))
        collected.append((node, lines))
    for node, body in collected:
        node.text = _clean_block("\n".join(body))
    roots = _nest(node for node, _ in collected)
    lead = _clean_block("\n".join(preamble))
    if lead:
        roots.insert(0, _Node(title="Preamble", depth=1, text=lead, numbered=False))
    return _assemble(path, _doc_id_from_stem(path), title, roots, fallback=path.stem)


# --- sections.json outlines -----------------------------------------------------------


def _from_outline(path: Path, raw: str) -> GuidelineDoc:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}: invalid JSON ({exc.msg} at line {exc.lineno})"
        ) from exc
    if not isinstance(data, dict) or not isinstance(data.get("sections"), list):
        raise InputError(f"{path}: expected an object with a list of 'sections'")
    roots = _outline_nodes(path, data["sections"], base_depth=0)
    title = str(data.get("title") or "").strip()
    return _assemble(path, _doc_id_from_stem(path), title, roots)


def _outline_nodes(path: Path, entries: list[Any], base_depth: int) -> list[_Node]:
    flat: list[_Node] = []
    nested: dict[int, list[Any]] = {}
    for position, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise InputError(f"{path}: section {position + 1} is not an object")
        level = entry.get("level", 1)
        if not isinstance(level, int) or isinstance(level, bool):
            raise InputError(f"{path}: section {position + 1} has a non-integer level")
        given = entry.get("section_id", entry.get("id"))
        node = _Node(
            title=str(entry.get("title") or "").strip(),
            depth=base_depth + level,
            text=_clean_block(str(entry.get("text") or "")),
            given_id=str(given) if given not in (None, "") else None,
        )
        flat.append(node)
        children = entry.get("children")
        if isinstance(children, list) and children:
            nested[id(node)] = children
    roots = _nest(flat)
    for node in flat:
        if id(node) in nested:
            # Nested entries sit below their parent whatever levels they state.
            node.children.extend(_outline_nodes(path, nested[id(node)], node.depth))
    return roots


# --- cpgQA passages -------------------------------------------------------------------


def _from_passages(path: Path, raw: str) -> GuidelineDoc:
    if path.name == "passages.jsonl":
        doc_id = slugify(path.resolve().parent.name, fallback="document")
    else:
        doc_id = _doc_id_from_stem(path)
    sections: list[Section] = []
    used = UniqueNames()
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: line {number} is not JSON ({exc.msg})") from exc
        if not isinstance(record, dict) or "passage_id" not in record:
            raise InputError(f"{path}: line {number} has no passage_id")
        if not isinstance(record.get("text"), str):
            raise InputError(f"{path}: line {number} has no text")
        sections.append(
            Section(
                doc_id=doc_id,
                section_id=used.take(str(record["passage_id"])),
                number="",
                title=str(record.get("title") or "").strip(),
                parent=None,
                children=[],
                text=record["text"].strip(),
                level=1,
            )
        )
    return GuidelineDoc(
        doc_id=doc_id, title=doc_id, source=str(path), sections=sections
    )


# --- HTML -----------------------------------------------------------------------------

_HTML_SKIP = frozenset({"script", "style", "noscript", "template", "svg"})
_HTML_BLOCKS = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "aside",
        "blockquote",
        "pre",
        "ul",
        "ol",
        "li",
        "dl",
        "dt",
        "dd",
        "table",
        "thead",
        "tbody",
        "tr",
        "figure",
        "figcaption",
        "caption",
    }
)
_HTML_PARAGRAPHS = frozenset(
    {"p", "div", "table", "section", "article", "main", "blockquote", "pre", "figure"}
)
_HTML_CELLS = frozenset({"td", "th"})
# Page furniture around the main content: dropped with everything inside.
_HTML_CHROME = frozenset({"nav", "aside", "form", "dialog", "menu"})
_HTML_CHROME_NAME = re.compile(
    r"(?:^|[\s_-])(?:cookies?|consent|banners?|nav|navbar|navigation|menus?|footer|"
    r"breadcrumbs?|sidebar|skip-link)(?:$|[\s_-])",
    re.IGNORECASE,
)
_HTML_VOID = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
    }
)
_HTML_MAIN = re.compile(r"<main[\s>]|role\s*=\s*[\"']?main\b", re.IGNORECASE)


class _HtmlSections(HTMLParser):
    """Collect headings and the text under each from an HTML document."""

    def __init__(self, *, main_only: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self._main_only = main_only
        self._main_depth = 0
        self._article_depth = 0
        self._chrome: list[
            str
        ] = []  # the open tags of a dropped element, outermost first
        self.preamble: list[str] = []
        self.nodes: list[tuple[int, str, list[str]]] = []
        self._buffer = self.preamble
        self._skip = 0
        self._heading: tuple[int, list[str]] | None = None
        self._in_title = False
        self._cells_in_row = 0

    def _is_chrome(self, tag: str, attrs: list[tuple[str, str | None]]) -> bool:
        if tag in _HTML_CHROME:
            return True
        if tag == "footer" or (tag == "header" and not self._article_depth):
            # An article's own header holds its title; the page's header does not.
            return True
        names = " ".join(v or "" for k, v in attrs if k in ("class", "id", "role"))
        return bool(names and _HTML_CHROME_NAME.search(names))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._chrome:
            if tag == self._chrome[0] and tag not in _HTML_VOID:
                self._chrome.append(tag)
            return
        if tag == "main" or ("role", "main") in attrs:
            self._main_depth += 1
        if tag == "article":
            self._article_depth += 1
        if tag not in _HTML_VOID and tag != "main" and self._is_chrome(tag, attrs):
            self._chrome.append(tag)
            return
        if self._main_only and not self._main_depth and tag != "title":
            return
        if tag in _HTML_SKIP:
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self._heading = (int(tag[1]), [])
        elif tag == "br":
            self._buffer.append("\n")
        elif tag in _HTML_BLOCKS:
            self._buffer.append("\n\n" if tag in _HTML_PARAGRAPHS else "\n")
            if tag == "tr":
                self._cells_in_row = 0
        elif tag in _HTML_CELLS:
            if self._cells_in_row:
                self._buffer.append(" | ")
            self._cells_in_row += 1

    def handle_endtag(self, tag: str) -> None:
        if self._chrome:
            if tag == self._chrome[0]:
                self._chrome.pop()
            return
        if tag == "main" and self._main_depth:
            self._main_depth -= 1
        if tag == "article" and self._article_depth:
            self._article_depth -= 1
        if tag in _HTML_SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag == "title":
            self._in_title = False
        elif self._heading is not None and tag == f"h{self._heading[0]}":
            level, parts = self._heading
            self._heading = None
            self._buffer = []
            self.nodes.append((level, " ".join("".join(parts).split()), self._buffer))
        elif tag in _HTML_PARAGRAPHS:
            self._buffer.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._skip or self._chrome:
            return
        if self._main_only and not self._main_depth:
            return
        if self._in_title:
            self.title += data
        elif self._heading is not None:
            self._heading[1].append(data)
        else:
            self._buffer.append(data)


def _html_text(parts: list[str]) -> str:
    lines = [_SPACES.sub(" ", line).strip() for line in "".join(parts).split("\n")]
    return _clean_block("\n".join(lines))


def parse_html(raw: str) -> _HtmlSections:
    """Parse an HTML page: its title, and the main content's headings and text."""
    parser = _HtmlSections(main_only=bool(_HTML_MAIN.search(raw)))
    parser.feed(raw)
    parser.close()
    return parser


def _from_html(path: Path, raw: str) -> GuidelineDoc:
    parser = parse_html(raw)
    nodes = [
        _Node(title=heading or "Untitled", depth=level, text=_html_text(parts))
        for level, heading, parts in parser.nodes
    ]
    roots = _nest(nodes)
    lead = _html_text(parser.preamble)
    if lead:
        roots.insert(0, _Node(title="Preamble", depth=1, text=lead, numbered=False))
    title = " ".join(parser.title.split())
    return _assemble(path, _doc_id_from_stem(path), title, roots)


# --- PDF ------------------------------------------------------------------------------


def _from_pdf(path: Path, data: bytes) -> GuidelineDoc:
    read = read_pdf(data, path)
    nodes: list[_Node] = []
    for heading, paragraphs in iter_sections(read.blocks):
        text = "\n\n".join(block.text for block in paragraphs)
        if heading is None:
            if text:
                nodes.append(
                    _Node(
                        title="Preamble",
                        depth=1,
                        text=text,
                        numbered=False,
                        page=paragraphs[0].page,
                    )
                )
            continue
        nodes.append(
            _Node(title=heading.text, depth=heading.level, text=text, page=heading.page)
        )
    preamble = [n for n in nodes if not n.numbered]
    roots = preamble + _nest(n for n in nodes if n.numbered)
    return _assemble(path, _doc_id_from_stem(path), read.title, roots)


# --- JATS XML -------------------------------------------------------------------------


def _local(tag: object) -> str:
    # "{uri}name" from a namespace-aware parser, "prefix:name" from parse_xml.
    return tag.rsplit("}", 1)[-1].rsplit(":", 1)[-1] if isinstance(tag, str) else ""


def _flat_text(element: ET.Element) -> str:
    return " ".join("".join(element.itertext()).split())


def _block_text(element: ET.Element) -> str:
    name = _local(element.tag)
    if name == "list":
        items = [
            _flat_text(item) for item in element if _local(item.tag) == "list-item"
        ]
        return "\n".join(item for item in items if item)
    if name == "table-wrap":
        lines: list[str] = []
        for part in element.iter():
            part_name = _local(part.tag)
            if part_name in {"label", "caption"}:
                lines.append(_flat_text(part))
            elif part_name == "tr":
                cells = [_flat_text(c) for c in part if _local(c.tag) in {"td", "th"}]
                lines.append(" | ".join(cells))
        return "\n".join(line for line in lines if line)
    return _flat_text(element)


def _jats_section(element: ET.Element, depth: int) -> _Node:
    title = ""
    label = ""
    blocks: list[str] = []
    children: list[_Node] = []
    for child in element:
        name = _local(child.tag)
        if name == "title":
            title = _flat_text(child)
        elif name == "label":
            label = _flat_text(child).rstrip(".")
        elif name == "sec":
            children.append(_jats_section(child, depth + 1))
        else:
            block = _block_text(child)
            if block:
                blocks.append(block)
    heading = f"{label}. {title}" if label and title else (title or label or "Untitled")
    node = _Node(title=heading, depth=depth, text="\n\n".join(blocks))
    node.children = children
    return node


def _from_jats(path: Path, raw: str) -> GuidelineDoc:
    # The same parser as articles: entity declarations refused from the parser's own
    # events, before anything is expanded.
    root = parse_xml(raw, path)
    if _local(root.tag) != "article":
        raise InputError(f"{path}: not a JATS article (root <{_local(root.tag)}>)")
    title = ""
    roots: list[_Node] = []
    for element in root.iter():
        name = _local(element.tag)
        if name == "article-title" and not title:
            title = _flat_text(element)
        elif name == "abstract" and not roots:
            text = "\n\n".join(
                b
                for b in (_block_text(c) for c in element if _local(c.tag) != "title")
                if b
            )
            if text:
                roots.append(
                    _Node(title="Abstract", depth=1, text=text, numbered=False)
                )
    body = next((e for e in root if _local(e.tag) == "body"), None)
    if body is not None:
        lead: list[str] = []
        for child in body:
            if _local(child.tag) == "sec":
                roots.append(_jats_section(child, 1))
            else:
                block = _block_text(child)
                if block:
                    lead.append(block)
        if lead:
            index = 1 if roots and roots[0].title == "Abstract" else 0
            roots.insert(
                index,
                _Node(
                    title="Preamble", depth=1, text="\n\n".join(lead), numbered=False
                ),
            )
    return _assemble(path, _doc_id_from_stem(path), title, roots)


# --- plain text -----------------------------------------------------------------------


def _from_text(path: Path, raw: str) -> GuidelineDoc:
    text = _clean_block(raw.replace("\r\n", "\n"))
    first_line = text.split("\n", 1)[0].strip()
    title = first_line if 0 < len(first_line) <= 120 else path.stem
    if len(text) <= PLAIN_TEXT_SINGLE_SECTION_CHARS:
        roots = [_Node(title=title, depth=1, text=text, given_id="text")]
        return _assemble(path, _doc_id_from_stem(path), title, roots)
    parts: list[list[str]] = [[]]
    size = 0
    for paragraph in re.split(r"\n\s*\n", text):
        if parts[-1] and size + len(paragraph) > PLAIN_TEXT_PART_CHARS:
            parts.append([])
            size = 0
        parts[-1].append(paragraph)
        size += len(paragraph) + 2
    roots = [
        _Node(title=f"Part {i}", depth=1, text="\n\n".join(chunk), given_id=f"part-{i}")
        for i, chunk in enumerate(parts, start=1)
    ]
    return _assemble(path, _doc_id_from_stem(path), title, roots)


def section_key(doc_id: str, section_id: str) -> str:
    """Return the corpus-wide key of a section (``doc:section``)."""
    return f"{doc_id}:{section_id}"
