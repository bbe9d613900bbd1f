"""Hostile and broken PDFs, built byte by byte: each class a reader must refuse fast.

Every builder returns a whole file (header, objects, cross-reference table, trailer)
small enough to sit in a test; what it holds is in its docstring.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Mapping

FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def build(objects: Mapping[int, bytes], *, root: int = 1) -> bytes:
    """Return a PDF of the numbered objects (bodies as written), with its xref."""
    out = bytearray(b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    size = max(objects) + 1
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for number in range(1, size):
        if number in offsets:
            out += b"%010d 00000 n \n" % offsets[number]
        else:
            out += b"0000000000 65535 f \n"
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        size,
        root,
        xref,
    )
    return bytes(out)


def stream(data: bytes, entries: bytes = b"", *, opening: bytes = b"stream\n") -> bytes:
    """Return a stream object's body: its dictionary, ``opening``, the data."""
    return (
        b"<< /Length %d %s >>\n" % (len(data), entries)
        + opening
        + data
        + b"\nendstream"
    )


def text_content(text: str = "Readable text on the page.") -> bytes:
    """Return a content stream showing one line of text in the page's /F1."""
    return f"BT /F1 12 Tf 72 700 Td ({text}) Tj ET".encode()


def one_page(
    content: bytes, *, resources: bytes = b"", extra: Mapping[int, bytes] | None = None
) -> bytes:
    """Return a one-page PDF: the page's content stream (object 5) as given."""
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        3: FONT,
        4: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> " + resources + b" >> /Contents 5 0 R >>",
        5: content,
    }
    objects.update(extra or {})
    return build(objects)


def good(text: str = "Readable text on the page.") -> bytes:
    """A plain, readable one-page PDF."""
    return one_page(stream(text_content(text)))


def blank_image(size: int = 2000) -> bytes:
    """A page of text over a blank grey ``size`` x ``size`` image, Flate-compressed.

    The image inflates some thousand times over near its end: the shape that sent a
    scan of every stream into an endless loop. The file is a good one.
    """
    pixels = zlib.compress(b"\x80" * (size * size), 9)
    image = stream(
        pixels,
        b"/Type /XObject /Subtype /Image /Width %d /Height %d "
        b"/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode"
        % (size, size),
    )
    content = b"q 612 0 0 792 0 0 cm /Im1 Do Q " + text_content("Text over an image.")
    return one_page(
        stream(content), resources=b"/XObject << /Im1 6 0 R >>", extra={6: image}
    )


@functools.cache
def _zeros_deflated(size: int) -> bytes:
    """Return ``size`` zero bytes as a zlib stream, built without holding them."""
    deflater = zlib.compressobj(9)
    block = b"\0" * (1 << 20)
    parts = [deflater.compress(block) for _ in range(size >> 20)]
    parts.append(deflater.flush())
    return b"".join(parts)


def bomb(opening: bytes = b"stream\n", *, inflated: int = 300 << 20) -> bytes:
    """A page whose content stream (opened by ``opening``) inflates to ``inflated``."""
    data = _zeros_deflated(inflated)
    return one_page(stream(data, b"/Filter /FlateDecode", opening=opening))


def double_bomb() -> bytes:
    """A content stream deflated twice: small, then 300 MB after both filters."""
    data = zlib.compress(_zeros_deflated(300 << 20), 9)
    return one_page(stream(data, b"/Filter [/FlateDecode /FlateDecode]"))


def reference_loop() -> bytes:
    """The catalog's /Pages is object 2, which is ``3 0 R``, which is ``2 0 R``."""
    return build(
        {1: b"<< /Type /Catalog /Pages 2 0 R >>", 2: b"3 0 R", 3: b"2 0 R", 4: FONT}
    )


def page_tree_loop() -> bytes:
    """A page tree whose second node lists the root among its kids."""
    return build(
        {
            1: b"<< /Type /Catalog /Pages 2 0 R >>",
            2: b"<< /Type /Pages /Kids [6 0 R 4 0 R] /Count 2 >>",
            3: FONT,
            4: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>",
            5: stream(text_content()),
            6: b"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R 6 0 R] /Count 1 >>",
        }
    )


def form_fan_out(depth: int = 8, fan: int = 10) -> bytes:
    """Form XObjects that each draw the next ``fan`` times, ``depth`` deep."""
    extra: dict[int, bytes] = {}
    first = 10
    for level in range(depth):
        number = first + level
        if level + 1 < depth:
            content = b" ".join([b"/X Do"] * fan)
            resources = b"/Resources << /XObject << /X %d 0 R >> >>" % (number + 1)
        else:
            content = text_content("leaf")
            resources = b"/Resources << /Font << /F1 3 0 R >> >>"
        extra[number] = stream(
            content,
            b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] " + resources,
        )
    page = b" ".join([b"/X Do"] * fan) + b" " + text_content()
    return one_page(
        stream(page), resources=b"/XObject << /X %d 0 R >>" % first, extra=extra
    )


def bad_checksum(inflated: int = 20 << 20) -> bytes:
    """A page whose ~20 KB content stream has a wrong checksum and inflates far.

    pdfminer's fallback for such a stream fed it to zlib one byte at a time, growing
    its result each time: quadratic in the inflated size.
    """
    content = text_content("Text before the padding.") + b" " * inflated
    data = bytearray(zlib.compress(content, 9))
    data[-4:] = bytes(b ^ 0xFF for b in data[-4:])
    return one_page(stream(bytes(data), b"/Filter /FlateDecode"))


def lzw_bomb(tables: int = 45) -> bytes:
    """A content stream of LZW codes that each decode to one byte more than the last.

    Each code names the entry it adds (a run of spaces one longer), up to a full
    table, which is then cleared: ``tables`` tables hold some 7 MB each.
    """
    codes: list[tuple[int, int]] = []
    for _ in range(tables):
        codes += [(256, 12 if codes else 9), (0x20, 9)]
        width, length = 9, 258
        while length < 4095:
            codes.append((length, width))
            length += 1
            width = {511: 10, 1023: 11, 2047: 12}.get(length, width)
    codes.append((257, 12))
    out = bytearray()
    acc = nbits = 0
    for code, size in codes:
        acc = (acc << size) | code
        nbits += size
        while nbits >= 8:
            nbits -= 8
            out.append((acc >> nbits) & 0xFF)
        acc &= (1 << nbits) - 1
    if nbits:
        out.append((acc << (8 - nbits)) & 0xFF)
    return one_page(stream(bytes(out), b"/Filter /LZWDecode"))


def many_draws(draws: int = 10_001) -> bytes:
    """A page drawing one small image ``draws`` times, one form inside another."""
    image = stream(
        b"\x80",
        b"/Type /XObject /Subtype /Image /Width 1 /Height 1 "
        b"/ColorSpace /DeviceGray /BitsPerComponent 8",
    )
    content = b" ".join([b"/Im1 Do"] * draws) + b" " + text_content()
    return one_page(
        stream(content), resources=b"/XObject << /Im1 6 0 R >>", extra={6: image}
    )


def fax_content() -> bytes:
    """A content stream in CCITT fax encoding, a billion pixels wide."""
    return one_page(
        stream(
            b"\x00" * 64,
            b"/Filter /CCITTFaxDecode /DecodeParms << /Columns 1000000000 >>",
        )
    )


def predictor_columns() -> bytes:
    """A content stream whose PNG predictor claims a billion columns."""
    data = zlib.compress(b"\x00" + text_content())
    return one_page(
        stream(
            data,
            b"/Filter /FlateDecode "
            b"/DecodeParms << /Predictor 12 /Columns 1000000000 >>",
        )
    )


PDF_CLASSES = {
    "blank-image": blank_image,
    "bomb-stream-cr": lambda: bomb(b"stream\r"),
    "bomb-stream-space-lf": lambda: bomb(b"stream \n"),
    "bomb-stream-crlf": lambda: bomb(b"stream\r\n"),
    "bomb-double-flate": double_bomb,
    "reference-loop": reference_loop,
    "page-tree-loop": page_tree_loop,
    "form-fan-out": form_fan_out,
    "nested-forms": lambda: form_fan_out(depth=3, fan=5),
    "many-draws": many_draws,
    "bad-checksum": bad_checksum,
    "lzw-bomb": lzw_bomb,
    "fax-content": fax_content,
    "predictor-columns": predictor_columns,
}
"""Every crafted class, by name: each is read (the good ones) or refused in one line."""

REFUSED = {
    "bomb-stream-cr": "decompression bomb",
    "bomb-stream-space-lf": "decompression bomb",
    "bomb-stream-crlf": "decompression bomb",
    "bomb-double-flate": "decompression bomb",
    "reference-loop": "refer to each other in a loop",
    "page-tree-loop": None,
    "form-fan-out": "fan-out bomb",
    "nested-forms": None,
    "many-draws": "draws over 10,000 forms or images",
    "bad-checksum": None,
    "lzw-bomb": "decompression bomb",
    "blank-image": None,
    "fax-content": "fax image",
    "predictor-columns": None,
}
"""What each class is refused for (None: it is read)."""
