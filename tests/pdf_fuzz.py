"""A seeded generator of malformed PDFs: page trees, streams, filters, references,
object streams and XObjects, each drawn at random and then damaged at random."""

from __future__ import annotations

import base64
import random
import zlib

from crafted_pdfs import FONT

OPENINGS = [b"stream\n", b"stream\r\n", b"stream\r", b"stream \n", b"stream"]
FILTERS = ["FlateDecode", "ASCIIHexDecode", "ASCII85Decode", "RunLengthDecode", "LZW"]


def _encode(data: bytes, name: str, rng: random.Random) -> bytes:
    """Encode ``data`` with one filter, rightly most of the time."""
    if rng.random() < 0.1:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 64)))
    if name == "FlateDecode":
        out = zlib.compress(data, rng.randint(0, 9))
        if rng.random() < 0.2:
            out = out[: rng.randint(0, len(out))]  # truncated
        elif rng.random() < 0.2:
            out = out[:-4] + bytes(rng.getrandbits(8) for _ in range(4))  # checksum
        return out
    if name == "ASCIIHexDecode":
        return data.hex().encode() + b">"
    if name == "ASCII85Decode":
        return base64.a85encode(data) + b"~>"
    if name == "RunLengthDecode":
        out = bytearray()
        for start in range(0, len(data), 128):
            chunk = data[start : start + 128]
            out += bytes([len(chunk) - 1]) + chunk
        return bytes(out + b"\x80")
    return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 32)))  # LZW noise


def _content(rng: random.Random, forms: list[str]) -> bytes:
    """A content stream: text, graphics state, and forms drawn."""
    ops: list[bytes] = []
    for _ in range(rng.randint(0, 12)):
        kind = rng.random()
        if kind < 0.4:
            word = rng.choice(
                ["Aspirin", "dose", "(nested)", "\\)", "\u00e9t\u00e9", ""]
            )
            ops.append(
                f"BT /F1 {rng.randint(-5, 40)} Tf {rng.randint(-100, 700)} "
                f"{rng.randint(-100, 800)} Td ({word}) Tj ET".encode(
                    "latin-1", "replace"
                )
            )
        elif kind < 0.6 and forms:
            ops.append(b"/%s Do" % rng.choice(forms).encode())
        elif kind < 0.7:
            ops.append(b"q 1 0 0 1 %d %d cm" % (rng.randint(-9, 9), rng.randint(-9, 9)))
        elif kind < 0.8:
            ops.append(b"Q")
        elif kind < 0.9:
            ops.append(b"[(a) -20 (b)] TJ")
        else:
            ops.append(bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 8))))
    return b" ".join(ops)


def _stream(rng: random.Random, data: bytes, entries: bytes, ids: list[int]) -> bytes:
    """A stream object with random filters, length and opening."""
    names = [rng.choice(FILTERS) for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))]
    for name in reversed(names):
        data = _encode(data, name, rng)
    filters = b""
    if names:
        filters = b"/Filter [%s]" % b" ".join(b"/" + n.encode() for n in names)
    length: bytes = b"%d" % len(data)
    roll = rng.random()
    if roll < 0.1:
        length = b"%d" % max(0, len(data) + rng.randint(-20, 20))
    elif roll < 0.15 and ids:
        length = b"%d 0 R" % rng.choice(ids)
    return (
        b"<< /Length "
        + length
        + b" "
        + filters
        + b" "
        + entries
        + b" >>\n"
        + rng.choice(OPENINGS)
        + data
        + b"\nendstream"
    )


def _ref(rng: random.Random, ids: list[int], wanted: int) -> int:
    """Mostly ``wanted``; at times another object, a missing one, or 0."""
    roll = rng.random()
    if roll < 0.85:
        return wanted
    if roll < 0.95:
        return rng.choice(ids)
    return rng.choice([0, max(ids) + 7])


def malformed_pdf(seed: int) -> bytes:
    """Return the PDF drawn from ``seed``: valid in shape, then damaged."""
    rng = random.Random(seed)
    objects: dict[int, bytes] = {}
    pages = rng.randint(1, 4)
    forms = rng.randint(0, 4)
    # 1 catalog, 2 root of the page tree, 3 font, then pages (page, content), forms,
    # an image and spare objects (loops, bare references).
    page_ids = [10 + 2 * i for i in range(pages)]
    form_ids = [40 + i for i in range(forms)]
    image_id, spare = 60, [61, 62, 63]
    ids = [1, 2, 3, *page_ids, *form_ids, image_id, *spare]
    form_names = [f"X{i}" for i in range(forms)] + ["Im"]
    xobjects = b" ".join(
        b"/X%d %d 0 R" % (i, _ref(rng, ids, fid)) for i, fid in enumerate(form_ids)
    )
    xobjects += b" /Im %d 0 R" % _ref(rng, ids, image_id)
    resources = b"<< /Font << /F1 %d 0 R >> /XObject << %s >> >>" % (
        _ref(rng, ids, 3),
        xobjects,
    )
    objects[1] = b"<< /Type /Catalog /Pages %d 0 R >>" % _ref(rng, ids, 2)
    if rng.random() < 0.3:
        # A middle node of the page tree, at times listing an ancestor.
        middle = spare[0]
        kids = b" ".join(b"%d 0 R" % _ref(rng, ids, p) for p in page_ids)
        objects[2] = b"<< /Type /Pages /Kids [%d 0 R] /Count %d >>" % (
            middle,
            rng.choice([pages, 0, -1, 10**12]),
        )
        extra = b" 2 0 R" if rng.random() < 0.3 else b""
        objects[middle] = b"<< /Type /Pages /Parent 2 0 R /Kids [%s%s] >>" % (
            kids,
            extra,
        )
    else:
        kids = b" ".join(b"%d 0 R" % _ref(rng, ids, p) for p in page_ids)
        objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages)
    objects[3] = FONT
    for page_id in page_ids:
        objects[page_id] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Resources %s "
            b"/Contents %d 0 R >>"
            % (
                rng.choice([612, 0, -5, 100000]),
                rng.choice([792, 0, 1]),
                resources,
                _ref(rng, ids, page_id + 1),
            )
        )
        objects[page_id + 1] = _stream(rng, _content(rng, form_names), b"", ids)
    for form_id in form_ids:
        entries = b"/Type /XObject /Subtype /Form /BBox [0 0 %d 100] /Resources %s" % (
            rng.choice([100, 0, -1]),
            resources,
        )
        objects[form_id] = _stream(rng, _content(rng, form_names), entries, ids)
    side = rng.choice([1, 16, 100, 300])
    pixels = bytes([rng.getrandbits(8)]) * (side * side)
    objects[image_id] = _stream(
        rng,
        pixels,
        b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
        b"/BitsPerComponent 8" % (side, side),
        ids,
    )
    for number in spare:
        if number not in objects:
            objects[number] = b"%d 0 R" % rng.choice(ids)
    if rng.random() < 0.3:
        return _damage(rng, _with_object_stream(rng, objects))
    return _damage(rng, _classic(objects, rng))


def _classic(objects: dict[int, bytes], rng: random.Random) -> bytes:
    """Lay the objects out with a classic cross-reference table."""
    out = bytearray(b"%PDF-1.7\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    size = max(objects) + 1
    xref = len(out)
    out += b"xref\n0 %d\n" % size
    for number in range(size):
        offset = offsets.get(number)
        if offset is not None and rng.random() < 0.05:
            offset += rng.randint(-30, 30)  # a wrong offset
        out += (
            b"%010d 00000 n \n" % max(offset, 0)
            if offset is not None
            else b"0000000000 65535 f \n"
        )
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        size,
        xref,
    )
    return bytes(out)


def _with_object_stream(rng: random.Random, objects: dict[int, bytes]) -> bytes:
    """Lay the objects out with the non-streams in an object stream, xref in a stream."""
    inside = [n for n, body in sorted(objects.items()) if b"stream" not in body]
    outside = [n for n in sorted(objects) if n not in inside]
    header = bytearray()
    body = bytearray()
    for number in inside:
        header += b"%d %d " % (number, len(body))
        body += objects[number] + b"\n"
    objstm_id = max(objects) + 1
    data = bytes(header) + bytes(body)
    first = len(header)
    if rng.random() < 0.2:
        first += rng.randint(-5, 5)
    objstm = (
        b"<< /Type /ObjStm /N %d /First %d /Filter /FlateDecode /Length %d >>\n"
        % (len(inside), first, len(zlib.compress(data)))
        + b"stream\n"
        + zlib.compress(data)
        + b"\nendstream"
    )
    out = bytearray(b"%PDF-1.7\n")
    offsets: dict[int, int] = {}
    for number in [*outside, objstm_id]:
        offsets[number] = len(out)
        text = objstm if number == objstm_id else objects[number]
        out += b"%d 0 obj\n" % number + text + b"\nendobj\n"
    xref_id = objstm_id + 1
    size = xref_id + 1
    rows = bytearray()
    for number in range(size):
        if number in offsets:
            rows += bytes([1]) + offsets[number].to_bytes(4, "big") + b"\0\0"
        elif number in inside:
            index = inside.index(number)
            rows += bytes([2]) + objstm_id.to_bytes(4, "big") + index.to_bytes(2, "big")
        elif number == xref_id:
            rows += bytes([1]) + len(out).to_bytes(4, "big") + b"\0\0"
        else:
            rows += bytes([0]) + bytes(4) + b"\xff\xff"
    packed = zlib.compress(bytes(rows))
    start = len(out)
    out += (
        b"%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Filter /FlateDecode "
        b"/Length %d >>\nstream\n"
        % (xref_id, size, len(packed))
        + packed
        + b"\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n" % start
    )
    return bytes(out)


def _damage(rng: random.Random, data: bytes) -> bytes:
    """Flip, drop, repeat or cut a few bytes, or leave the file whole."""
    out = bytearray(data)
    for _ in range(rng.choice([0, 0, 1, 2, 5])):
        if not out:
            break
        at = rng.randrange(len(out))
        roll = rng.random()
        if roll < 0.4:
            out[at] = rng.getrandbits(8)
        elif roll < 0.6:
            del out[at : at + rng.randint(1, 16)]
        elif roll < 0.8:
            out[at:at] = out[at : at + rng.randint(1, 16)] * rng.randint(2, 50)
        else:
            del out[at:]
    return bytes(out)
