"""Read the text of a PDF into headings and paragraphs, in reading order.

The glyphs of each page (from pdfminer.six, no model) are grouped into lines and the
lines into the order a reader follows: top to bottom on one-column pages; on a
two-column page (an empty gutter near the middle), the left column before the right
one, with lines crossing the gutter (a title over both columns) read in place.

* Running headers and footers are dropped: lines near the top or bottom edge whose text,
  digits aside, repeats at the same height on at least half of the pages; so are page
  numbers ("12", "Page 3 of 9", "3/12") near an edge.
* Headings are lines set larger than the body text, or wholly bold short lines (or
  numbered ones, "2.3 Methods", in bold); their level follows the size (largest first),
  bold at body size coming last.
* Paragraphs break at a vertical gap; a word hyphenated at a line end is rejoined
  unless the document writes it with its hyphen elsewhere.
* Table cells on one line are kept as one text row, cells separated by " | ".

Bad files raise :class:`~veriscribe.errors.InputError` with one line: encrypted, no
text layer (a scan), fonts whose glyphs map to no text, malformed or truncated, too many
pages, objects that refer to each other in a loop, a page drawing forms that draw forms
(a fan-out bomb) or setting absurdly many glyphs, or streams that inflate to far more
than the file holds (a "PDF bomb"). Every stream pdfminer decodes (Flate, LZW) is
inflated within one budget per file, whatever its syntax, and a stream with a bad
checksum is inflated in one pass.
"""

from __future__ import annotations

import io
import logging
import re
import statistics
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veriscribe.errors import InputError

MAX_PAGES = 2000
"""More pages than this are refused: no real guideline or article has them."""

MAX_INFLATED_BYTES = 200_000_000
"""Compressed streams may hold this much in all; past it (and past ``MAX_RATIO`` times
the file) the file is a decompression bomb."""

MAX_RATIO = 100
"""Largest ratio of decompressed stream bytes to file bytes for files past the cap."""

MAX_FORM_DRAWS = 10_000
"""A page drawing more Form XObjects and images than this is refused."""

MAX_NESTED_DRAWS = 1_000
"""A page whose forms draw more forms and images than this is refused: forms that
each draw the next ten times reach millions of draws a few levels down."""

MAX_PAGE_GLYPHS = 200_000
"""A page setting more glyphs than this is refused: a dense page sets some 10,000."""

_EDGE = 0.12  # share of the page height, at top and at bottom, where headers sit
_ROMAN = r"(?=[ivxlc])c{0,3}(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"
_PAGE_NUMBER = re.compile(
    rf"^(?:page\s+)?(?:\d{{1,6}}|{_ROMAN})(?:\s*(?:/|of)\s*\d{{1,6}})?$"
    r"|^[-\u2013\u2014]\s*\d{1,6}\s*[-\u2013\u2014]$",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3})*\.?|[IVXLC]{1,6}\.|[A-Z]\.)\s+\S")
_CID = re.compile(r"\(cid:\d+\)")
_HYPHENATED = re.compile(r"([A-Za-z]+)-$")
_FIRST_WORD = re.compile(r"^([a-z]+)")
_WORD_HYPHEN = re.compile(r"[A-Za-z0-9]-$")
_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")
_RUN_ON_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "as",
        "at",
        "by",
        "for",
        "from",
        "in",
        "of",
        "on",
        "or",
        "the",
        "to",
        "with",
    }
)
_SENTENCE_END = re.compile(r"[.!?:;]['\")\]\u201d\u2019]?$")


@dataclass
class Line:
    """One line of text on a page, in PDF points (origin bottom left).

    Attributes:
        text: The line's text.
        page: The page number, from 1.
        x0: Left edge.
        x1: Right edge.
        top: Top edge (larger is higher on the page).
        bottom: Bottom edge.
        size: The font size of most of its glyphs.
        bold: Whether nearly all its glyphs are set in a bold font.
    """

    text: str
    page: int
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    bold: bool


@dataclass
class Block:
    """A heading or a paragraph, with the page it starts on.

    Attributes:
        text: The text, whitespace collapsed (paragraphs keep no line breaks).
        page: The page number, from 1.
        level: The heading level (1 is the largest), or 0 for a paragraph.
    """

    text: str
    page: int
    level: int = 0


@dataclass
class PdfText:
    """What a PDF reads to.

    Attributes:
        title: The title in the file's metadata, or "".
        blocks: Headings and paragraphs in reading order.
        pages: The number of pages.
    """

    title: str
    blocks: list[Block]
    pages: int


def read_pdf(data: bytes, path: Path | str) -> PdfText:
    """Read a PDF's text into headings and paragraphs.

    Raises:
        InputError: Not a PDF, malformed or truncated, encrypted, a decompression or
            page-count bomb, without a text layer (a scan) or with fonts whose glyphs
            map to no text.
    """
    pages, title, height = _page_lines(data, path)
    if not any(line.text.strip() for page in pages for line in page):
        raise InputError(
            f"{path}: the PDF has no text layer (a scanned image?); run OCR on it "
            "first, e.g. `ocrmypdf in.pdf out.pdf`"
        )
    unmapped = sum(len(_CID.findall(line.text)) for page in pages for line in page)
    mapped = sum(len(_CID.sub("", line.text)) for page in pages for line in page)
    if unmapped > mapped:
        raise InputError(
            f"{path}: the PDF's fonts have no text mapping (glyph codes only); run "
            "OCR on it first, e.g. `ocrmypdf --force-ocr in.pdf out.pdf`"
        )
    if unmapped:
        # A few unmapped glyphs (symbols) in an otherwise readable file: left out.
        for page in pages:
            for line in page:
                line.text = " ".join(_CID.sub("", line.text).split())
        pages = [[line for line in page if line.text] for page in pages]
    kept = drop_running_lines(pages, height)
    lines = [line for page in kept for line in page]
    blocks = build_blocks(lines)
    return PdfText(title=title, blocks=blocks, pages=len(pages))


# --------------------------------------------------------------------------- parsing


class _Budget:
    """What reading one file may still spend: inflated bytes, Form XObject draws."""

    def __init__(self, path: Path | str, size: int) -> None:
        self.path = path
        self.size = size
        self.limit = max(MAX_INFLATED_BYTES, MAX_RATIO * size)
        self.inflated = 0
        self.forms = 0
        self.nested = 0
        self.depth = 0
        self.glyphs = 0

    @property
    def room(self) -> int:
        """Bytes that may still be inflated."""
        return self.limit - self.inflated

    def spend(self, produced: int) -> None:
        """Count ``produced`` inflated bytes; refuse the file past the limit."""
        self.inflated += produced
        if self.inflated > self.limit:
            raise InputError(
                f"{self.path}: its compressed streams inflate to over "
                f"{self.limit // 1_000_000} MB from a {self.size:,}-byte file "
                "(a decompression bomb); not read"
            )


_BUDGET: ContextVar[_Budget | None] = ContextVar("pdf_budget", default=None)


def _budget() -> _Budget:
    """Return the budget of the file being read (a fresh default one outside)."""
    return _BUDGET.get() or _Budget("the PDF", 0)


def _inflate(data: bytes) -> bytes:
    """Inflate one Flate stream within the budget, as ``zlib.decompress`` would.

    Raises:
        zlib.error: The data is not a whole zlib stream (corrupt or truncated).
        InputError: The stream inflates past what is left of the budget.
    """
    budget = _budget()
    inflater = zlib.decompressobj()
    out = inflater.decompress(data, budget.room + 1)
    budget.spend(len(out))
    if not inflater.eof:
        # Thrown away: pdfminer inflates the stream again, as a corrupted one.
        budget.inflated -= len(out)
        raise zlib.error("incomplete or truncated stream")
    return out


def _inflate_corrupted(data: bytes) -> bytes:
    """Inflate a stream whose checksum is wrong or missing, within the budget.

    What pdfminer's own fallback keeps (all but a bad checksum), in one pass where
    it feeds the data byte by byte to an ever-growing result (quadratic).

    Raises:
        zlib.error: The data is corrupt before its last four bytes.
        InputError: The stream inflates past what is left of the budget.
    """
    budget = _budget()
    inflater = zlib.decompressobj()
    body, check = data[:-4], data[-4:]
    out = inflater.decompress(body, budget.room + 1)
    budget.spend(len(out))
    try:
        tail = inflater.decompress(check, budget.room + 1)
    except zlib.error:
        logging.getLogger(__name__).debug("a stream's checksum is wrong; data kept")
        return out
    budget.spend(len(tail))
    return out + tail


def _lzw_inflate(data: bytes) -> bytes:
    """Decode an LZW stream within the budget (LZW codes expand up to 4 KB each)."""
    from pdfminer.lzw import LZWDecoder

    budget = _budget()
    parts: list[bytes] = []
    for part in LZWDecoder(io.BytesIO(data)).run():
        budget.spend(len(part))
        parts.append(part)
    return b"".join(parts)


def _fax_decode(data: bytes, params: dict[str, object]) -> bytes:
    """Refuse to decode a CCITT fax image where pdfminer wants text or fonts.

    Images are never decoded to read text, so only a stream read as content, a
    font or an object stream comes here, and pdfminer's fax decoder grows its
    output by concatenation (quadratic) to any size the stream's /Columns ask.
    """
    raise InputError(
        f"{_budget().path}: malformed PDF, a stream read for text is a fax image "
        "(CCITTFaxDecode); not read"
    )


def _png_predictor(
    pred: int, colors: int, columns: int, bitspercomponent: int, data: bytes
) -> bytes:
    """Undo a PNG predictor as pdfminer does, whatever /Columns the stream claims.

    pdfminer makes a list of ``columns`` zeros first (8 GB for a claimed billion);
    columns past what the data holds change nothing (it is one partial row), so
    they are cut to that.
    """
    from pdfminer.utils import apply_png_predictor

    columns = min(columns, 8 * len(data) + 8)
    return apply_png_predictor(pred, colors, columns, bitspercomponent, data)


class _Zlib:
    """What pdfminer's stream decoder sees of zlib: ``decompress`` within budget."""

    error = zlib.error
    decompressobj = staticmethod(zlib.decompressobj)
    decompress = staticmethod(_inflate)


def _bound_pdfminer() -> None:
    """Route every stream pdfminer decodes through the budget of the file being read.

    Whatever the stream's syntax (``stream`` followed by CR, LF or spaces, a stream
    in an object stream, filters chained), pdfminer inflates it in
    ``PDFStream.decode``; counting there is exact, where a scan of the file's bytes
    for streams guesses where each begins.
    """
    from pdfminer import pdftypes

    # The names pdfminer's decoder looks up in its own module, replaced there only.
    vars(pdftypes).update(
        zlib=_Zlib,
        decompress_corrupted=_inflate_corrupted,
        lzwdecode=_lzw_inflate,
        ccittfaxdecode=_fax_decode,
        apply_png_predictor=_png_predictor,
    )


def _page_lines(data: bytes, path: Path | str) -> tuple[list[list[Line]], str, float]:
    """Parse the file; return each page's lines, the metadata title, a page height."""
    if not data.lstrip()[:5].startswith(b"%PDF-"):
        raise InputError(f"{path}: not a PDF (no %PDF- header)")
    # pdfminer logs every odd font or object it meets; the one line raised here is
    # what a user needs.
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    _bound_pdfminer()
    token = _BUDGET.set(_Budget(path, len(data)))
    try:
        return _parse(data, path)
    finally:
        _BUDGET.reset(token)


def _parse(data: bytes, path: Path | str) -> tuple[list[list[Line]], str, float]:
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfinterp import PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import resolve1

    truncated = b"%%EOF" not in data[-2048:]
    try:
        document = _document_class()(PDFParser(io.BytesIO(data)))
    except (PDFPasswordIncorrect, PDFEncryptionError) as exc:
        raise InputError(
            f"{path}: the PDF is encrypted and needs a password ({type(exc).__name__}); "
            "save an unprotected copy"
        ) from None
    except (InputError, MemoryError):
        raise  # out of memory: the reader process says so, with its limit
    except Exception as exc:  # pdfminer raises many kinds on broken files
        raise InputError(_broken(path, truncated, exc)) from None
    try:
        count = resolve1(resolve1(document.catalog.get("Pages")).get("Count", 0))
    except (InputError, MemoryError):
        raise
    except Exception:  # a missing or odd page tree: counted while reading below
        count = 0
    if isinstance(count, int) and count > MAX_PAGES:
        raise InputError(
            f"{path}: {count:,} pages, over the {MAX_PAGES:,}-page limit; not read"
        )
    title = _info_title(document.info)
    manager = PDFResourceManager(caching=True)
    device = _aggregator_class()(manager, laparams=None)
    interpreter = _interpreter_class()(manager, device)
    pages: list[list[Line]] = []
    heights: list[float] = []
    try:
        for number, page in enumerate(PDFPage.create_pages(document), start=1):
            if number > MAX_PAGES:
                raise InputError(f"{path}: over the {MAX_PAGES:,}-page limit; not read")
            budget = _budget()
            budget.forms = budget.nested = budget.depth = budget.glyphs = 0
            interpreter.process_page(page)
            layout = device.get_result()
            heights.append(float(layout.height))
            pages.append(page_lines(_glyphs(layout), number))
    except (InputError, MemoryError):
        raise
    except RecursionError:
        raise InputError(
            f"{path}: malformed PDF, nested too deeply to be read (a page tree, "
            "form or object that contains itself?)"
        ) from None
    except Exception as exc:
        raise InputError(_broken(path, truncated, exc)) from None
    if not pages:
        raise InputError(_broken(path, truncated, ValueError("no page")))
    return pages, title, statistics.median(heights)


_CLASSES: dict[str, Any] = {}


def _document_class() -> Any:
    """Return pdfminer's document, refusing an object that is only a reference loop."""
    if "document" in _CLASSES:
        return _CLASSES["document"]
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdftypes import PDFObjRef

    class Document(PDFDocument):
        def getobj(self, objid: int) -> object:
            # pdfminer's resolve1 follows "2 0 R" to "3 0 R" to "2 0 R" for ever: an
            # object that is only a reference is followed here, each once.
            obj = super().getobj(objid)
            seen = [objid]
            while isinstance(obj, PDFObjRef):
                if obj.objid in seen:
                    chain = " -> ".join(str(n) for n in [*seen, obj.objid])
                    raise InputError(
                        f"{_budget().path}: malformed PDF, its objects refer to each "
                        f"other in a loop ({chain}); not read"
                    )
                seen.append(obj.objid)
                obj = super().getobj(obj.objid)
            return obj

    _CLASSES["document"] = Document
    return Document


def _interpreter_class() -> Any:
    """Return pdfminer's page interpreter, counting the Form XObjects a page draws."""
    if "interpreter" in _CLASSES:
        return _CLASSES["interpreter"]
    from pdfminer.pdfinterp import PDFPageInterpreter

    class Interpreter(PDFPageInterpreter):
        def do_Do(self, xobjid_arg: Any) -> None:
            budget = _budget()
            budget.forms += 1
            budget.nested += budget.depth > 0
            if budget.nested > MAX_NESTED_DRAWS:
                raise InputError(
                    f"{budget.path}: a page's forms draw over {MAX_NESTED_DRAWS:,} "
                    "more forms or images (forms drawing forms, a fan-out bomb); "
                    "not read"
                )
            if budget.forms > MAX_FORM_DRAWS:
                raise InputError(
                    f"{budget.path}: a page draws over {MAX_FORM_DRAWS:,} forms or "
                    "images; not read"
                )
            budget.depth += 1
            try:
                super().do_Do(xobjid_arg)
            finally:
                budget.depth -= 1

    _CLASSES["interpreter"] = Interpreter
    return Interpreter


def _aggregator_class() -> Any:
    """Return pdfminer's layout collector, counting the glyphs a page sets."""
    if "aggregator" in _CLASSES:
        return _CLASSES["aggregator"]
    from pdfminer.converter import PDFPageAggregator

    class Aggregator(PDFPageAggregator):
        def render_char(self, *args: Any, **kwargs: Any) -> float:
            budget = _budget()
            budget.glyphs += 1
            if budget.glyphs > MAX_PAGE_GLYPHS:
                raise InputError(
                    f"{budget.path}: a page sets over {MAX_PAGE_GLYPHS:,} glyphs "
                    "(text drawn over and over?); not read"
                )
            return float(super().render_char(*args, **kwargs))

    _CLASSES["aggregator"] = Aggregator
    return Aggregator


def _broken(path: Path | str, truncated: bool, exc: Exception) -> str:
    why = " ".join(str(exc).split())[:120] or type(exc).__name__
    if truncated:
        return f"{path}: the PDF is truncated (no end-of-file marker) and cannot be read ({why})"
    return f"{path}: malformed PDF, cannot be read ({why})"


def _info_title(info: list[dict[str, object]]) -> str:
    for entry in info:
        raw = entry.get("Title")
        if isinstance(raw, bytes):
            if raw.startswith(b"\xfe\xff"):
                text = raw.decode("utf-16", "ignore")
            else:
                text = raw.decode("latin-1", "ignore")
            return " ".join(text.split())
        if isinstance(raw, str):
            return " ".join(raw.split())
    return ""


@dataclass
class _Glyph:
    text: str
    x0: float
    x1: float
    y0: float
    y1: float
    size: float
    bold: bool


def _glyphs(layout: object) -> list[_Glyph]:
    from pdfminer.layout import LTChar, LTContainer

    found: list[_Glyph] = []

    def walk(item: object) -> None:
        if isinstance(item, LTChar):
            name = item.fontname.lower()
            found.append(
                _Glyph(
                    text=item.get_text(),
                    x0=float(item.x0),
                    x1=float(item.x1),
                    y0=float(item.y0),
                    y1=float(item.y1),
                    size=round(float(item.size), 1),
                    bold="bold" in name or "black" in name or "heavy" in name,
                )
            )
        elif isinstance(item, LTContainer):
            for child in item:
                walk(child)

    walk(layout)
    return found


def page_lines(glyphs: list[_Glyph], page: int) -> list[Line]:
    """Group a page's glyphs into lines: one baseline, split at wide gaps."""
    rows: list[list[_Glyph]] = []
    for glyph in sorted(glyphs, key=lambda g: (-round(g.y0, 0), g.x0)):
        if rows and abs(rows[-1][0].y0 - glyph.y0) <= 0.25 * max(glyph.size, 1.0):
            rows[-1].append(glyph)
        else:
            rows.append([glyph])
    lines: list[Line] = []
    for row in rows:
        row.sort(key=lambda g: g.x0)
        segment: list[_Glyph] = []
        for glyph in row:
            if segment:
                gap = glyph.x0 - segment[-1].x1
                if gap > 0.9 * max(glyph.size, segment[-1].size):
                    lines.append(_line(segment, page))
                    segment = []
                elif (
                    gap > 0.2 * glyph.size
                    and segment[-1].text != " "
                    and glyph.text != " "
                ):
                    segment.append(
                        _Glyph(
                            " ",
                            segment[-1].x1,
                            glyph.x0,
                            glyph.y0,
                            glyph.y1,
                            glyph.size,
                            glyph.bold,
                        )
                    )
            segment.append(glyph)
        if segment:
            lines.append(_line(segment, page))
    return [line for line in lines if line.text]


def _line(glyphs: list[_Glyph], page: int) -> Line:
    text = unicodedata.normalize("NFKC", "".join(g.text for g in glyphs))
    text = " ".join(text.replace("\u00ad", "-").split())
    inked = [g for g in glyphs if g.text.strip()] or glyphs
    sizes = Counter(g.size for g in inked)
    return Line(
        text=text,
        page=page,
        x0=min(g.x0 for g in glyphs),
        x1=max(g.x1 for g in glyphs),
        top=max(g.y1 for g in glyphs),
        bottom=min(g.y0 for g in glyphs),
        size=sizes.most_common(1)[0][0],
        bold=sum(g.bold for g in inked) >= 0.9 * len(inked),
    )


# ------------------------------------------------------------------ running lines


def _shape(text: str) -> str:
    """The text with every number replaced, so page 3 and page 4 headers match."""
    return re.sub(r"\d+", "#", text.lower())


def drop_running_lines(pages: list[list[Line]], height: float) -> list[list[Line]]:
    """Remove running headers, footers and page numbers from every page."""
    edge = _EDGE * height

    def near_edge(line: Line) -> bool:
        return line.top >= height - edge or line.bottom <= edge

    seen: Counter[tuple[str, int]] = Counter()
    for page in pages:
        keys = {
            (_shape(line.text), round(line.top / 4)) for line in page if near_edge(line)
        }
        seen.update(keys)
    need = max(2, (len(pages) + 1) // 2)

    def repeats(line: Line) -> bool:
        shape = _shape(line.text)
        slot = round(line.top / 4)
        return max(seen[(shape, s)] for s in (slot - 1, slot, slot + 1)) >= need

    kept: list[list[Line]] = []
    for page in pages:
        kept.append(
            [
                line
                for line in page
                if not (
                    near_edge(line)
                    and (
                        _PAGE_NUMBER.match(line.text.strip())
                        or (len(pages) > 1 and repeats(line))
                    )
                )
            ]
        )
    return kept


# ------------------------------------------------------------------ reading order


def reading_order(lines: list[Line]) -> list[Line]:
    """Order one page's lines as read: columns left to right, rows as one line."""
    if not lines:
        return []
    left = min(line.x0 for line in lines)
    right = max(line.x1 for line in lines)
    gutter = _gutter(lines, left, right)
    ordered: list[Line] = []
    region: list[Line] = []

    def flush() -> None:
        if gutter is None:
            ordered.extend(_rows(region))
        else:
            # A line running a little into the gutter (a wide table) stays in the
            # column holding most of it.
            ordered.extend(_rows([x for x in region if gutter - x.x0 >= x.x1 - gutter]))
            ordered.extend(_rows([x for x in region if gutter - x.x0 < x.x1 - gutter]))
        region.clear()

    reach = 0.25 * (right - left) / 2
    for line in sorted(lines, key=lambda x: (-x.top, x.x0)):
        if gutter is not None and _spans(line, gutter, reach):
            flush()
            ordered.append(line)
        else:
            region.append(line)
    flush()
    return ordered


def _spans(line: Line, x: float, reach: float) -> bool:
    """Whether a line runs well into both sides of ``x`` (it spans both columns)."""
    return line.x0 <= x - reach and line.x1 >= x + reach


def _gutter(lines: list[Line], left: float, right: float) -> float | None:
    """Find the x of an empty band between two columns, or None for one column."""
    width = right - left
    if width <= 0 or len(lines) < 6:
        return None
    steps = 60
    scored: list[tuple[float, int, float]] = []
    for step in range(steps + 1):
        x = left + width * (0.35 + 0.3 * step / steps)
        spanning = sum(1 for line in lines if _spans(line, x, 0.05 * width))
        touching = sum(1 for line in lines if line.x0 < x < line.x1)
        # Lines well across x count fully; lines just touching it (a short line of
        # the other column, a table a little too wide) count a little.
        scored.append((spanning + 0.1 * touching, spanning, x))
    best = min(score for score, _, _ in scored)
    ties = [(spanning, x) for score, spanning, x in scored if score == best]
    crossing, x = ties[len(ties) // 2]
    on_left = sum(1 for line in lines if line.x1 <= x)
    on_right = sum(1 for line in lines if line.x0 >= x)
    if crossing <= 0.1 * len(lines) and min(on_left, on_right) >= 0.25 * len(lines):
        # Columns are full of long lines; short lines alone on one side are not a column.
        long_right = sum(
            1 for line in lines if line.x0 >= x and line.x1 > right - 0.15 * width
        )
        if long_right >= 0.15 * on_right:
            return x
    return None


def _rows(lines: list[Line]) -> list[Line]:
    """Sort lines top to bottom, merging pieces on one baseline into one row."""
    groups: list[list[Line]] = []
    for line in sorted(lines, key=lambda x: (-x.top, x.x0)):
        if groups and abs(groups[-1][0].bottom - line.bottom) <= 0.3 * line.size:
            groups[-1].append(line)
        else:
            groups.append([line])
    return [_merge_row(sorted(group, key=lambda x: x.x0)) for group in groups]


def _merge_row(pieces: list[Line]) -> Line:
    """Make one line of the pieces of a row: a justified line, or table cells."""
    if len(pieces) == 1:
        return pieces[0]
    gaps = [b.x0 - a.x1 for a, b in zip(pieces, pieces[1:], strict=False)]
    size = pieces[0].size
    # Justification stretches every space of a line alike; table cells sit apart
    # at whatever distances their columns give.
    justified = (
        max(gaps) <= 1.15 * min(gaps) + 0.5 if len(gaps) > 1 else gaps[0] < 3 * size
    )
    joiner = " " if justified else " | "
    return Line(
        text=joiner.join(piece.text for piece in pieces),
        page=pieces[0].page,
        x0=pieces[0].x0,
        x1=pieces[-1].x1,
        top=max(piece.top for piece in pieces),
        bottom=min(piece.bottom for piece in pieces),
        size=size,
        bold=all(piece.bold for piece in pieces),
    )


# ------------------------------------------------------------- headings, paragraphs


def build_blocks(lines: list[Line]) -> list[Block]:
    """Turn lines (all pages) into headings and paragraphs in reading order."""
    by_page: dict[int, list[Line]] = {}
    for line in lines:
        by_page.setdefault(line.page, []).append(line)
    ordered = [
        line for page in sorted(by_page) for line in reading_order(by_page[page])
    ]
    if not ordered:
        return []
    body = _body_size(ordered)
    styles = _heading_styles(ordered, body)
    vocabulary = Counter(
        w.lower() for line in ordered for w in _WORD.findall(line.text)
    )
    blocks: list[Block] = []
    current: list[Line] = []
    heading: list[Line] = []

    def end_paragraph() -> None:
        if current:
            blocks.append(Block(_join(current, vocabulary), current[0].page))
            current.clear()

    def end_heading() -> None:
        if heading:
            style = _style(heading[0], body)
            text = " ".join(" ".join(x.text for x in heading).split())
            blocks.append(Block(text, heading[0].page, styles[style] if style else 1))
            heading.clear()

    previous: Line | None = None
    for line in ordered:
        style = _style(line, body) if _is_heading(line, body) else None
        if style is not None:
            end_paragraph()
            if heading and (
                _style(heading[-1], body) != style or not _close(heading[-1], line)
            ):
                end_heading()
            heading.append(line)
        else:
            end_heading()
            if current and previous is not None and _breaks(previous, line):
                end_paragraph()
            current.append(line)
        previous = line
    end_heading()
    end_paragraph()
    return blocks


def _body_size(lines: list[Line]) -> float:
    sizes: Counter[float] = Counter()
    for line in lines:
        sizes[line.size] += len(line.text)
    return sizes.most_common(1)[0][0]


def _style(line: Line, body: float) -> tuple[float, bool] | None:
    if line.size > body * 1.12:
        return (line.size, line.bold)
    if line.bold:
        return (body, True)
    return None


def _is_heading(line: Line, body: float) -> bool:
    text = line.text.strip()
    if not text or len(text) > 200 or _PAGE_NUMBER.match(text) or "|" in text:
        return False
    if line.size > body * 1.12:
        return any(ch.isalpha() for ch in text)
    if line.bold and len(text.split()) <= 20 and any(ch.isalpha() for ch in text):
        return not text.endswith((",", ";")) or bool(_NUMBERED.match(text))
    return False


def _heading_styles(lines: list[Line], body: float) -> dict[tuple[float, bool], int]:
    """Rank heading styles: larger first, bold before regular at one size."""
    styles = {
        style
        for line in lines
        if _is_heading(line, body) and (style := _style(line, body)) is not None
    }
    ranked = sorted(styles, key=lambda s: (-s[0], not s[1]))
    return {style: index + 1 for index, style in enumerate(ranked)}


def _close(above: Line, below: Line) -> bool:
    """Whether two heading lines are one heading wrapped over two lines."""
    gap = above.bottom - below.top
    if above.page == below.page and 0 <= gap <= 0.8 * below.size:
        return True
    # A heading broken across a column or page ends on a word that cannot end it.
    last = above.text.rsplit(" ", 1)[-1].lower()
    return last in _RUN_ON_WORDS or below.text[:1].islower()


def _breaks(previous: Line, line: Line) -> bool:
    """Whether a new paragraph starts at ``line``."""
    gap = previous.bottom - line.top
    if line.page != previous.page or gap < -line.size:
        # A new page or column: the paragraph goes on unless the last one ended.
        return bool(_SENTENCE_END.search(previous.text))
    return gap > 0.45 * line.size


def _join(lines: Iterable[Line], vocabulary: Counter[str]) -> str:
    """Join a paragraph's lines, rejoining words hyphenated at a line end."""
    text = ""
    for line in lines:
        piece = line.text.strip()
        if not text:
            text = piece
            continue
        hyphen = _HYPHENATED.search(text)
        first = _FIRST_WORD.match(piece)
        if hyphen and first and not text.endswith("--"):
            head, tail = hyphen.group(1), first.group(1)
            joined = (head + tail).lower()
            kept = f"{head}-{tail}".lower()
            # A compound ("meta-analysis") keeps its hyphen when the document writes it
            # so, or uses both halves as words (beyond this break) and never the
            # joined form.
            compound = vocabulary[head.lower()] > 1 and vocabulary[tail.lower()] > 1
            if vocabulary[joined] > vocabulary[kept] or (
                vocabulary[joined] == vocabulary[kept] == 0 and not compound
            ):
                text = text[:-1] + piece
                continue
            text = text + piece
            continue
        if _WORD_HYPHEN.search(text) and (piece[:1].isupper() or piece[:1].isdigit()):
            # A capital or a digit after the break is no word's inside: a compound
            # ("Medication-Assisted", "non-Hispanic", "COVID-19") or a range ("4.7-14").
            text = text + piece
            continue
        text = f"{text} {piece}"
    return text


def iter_sections(blocks: list[Block]) -> Iterator[tuple[Block | None, list[Block]]]:
    """Yield each heading (None before the first) with the paragraphs under it."""
    heading: Block | None = None
    body: list[Block] = []
    for block in blocks:
        if block.level:
            if heading is not None or body:
                yield heading, body
            heading, body = block, []
        else:
            body.append(block)
    if heading is not None or body:
        yield heading, body
