"""The character encoding of a web page: its byte order mark, else what it declares.

A page saved by a browser or an older editor is often in Windows-1252 and says so in
its head: ``<meta charset="windows-1252">``, or the older ``<meta http-equiv=
"Content-Type" content="text/html; charset=windows-1252">``. As browsers do, a byte
order mark wins over a declaration, which is looked for in the first
:data:`PRESCAN_BYTES` bytes only, and the labels that browsers read as Windows-1252
(``iso-8859-1``, ``us-ascii`` and their aliases) are read as Windows-1252 too.
"""

from __future__ import annotations

import re

from veriscribe.errors import InputError

PRESCAN_BYTES = 4096
"""Bytes at the start of a page searched for its declaration (browsers search 1024)."""

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
_META_CHARSET = re.compile(
    rb"<meta\b[^>]*?\bcharset\s*=\s*[\"']?\s*([A-Za-z0-9._:-]{1,40})", re.IGNORECASE
)
# The WHATWG Encoding Standard's labels of windows-1252.
_WINDOWS_1252 = frozenset(
    {
        "ansi_x3.4-1968",
        "ascii",
        "cp1252",
        "cp819",
        "csisolatin1",
        "ibm819",
        "iso-8859-1",
        "iso-ir-100",
        "iso8859-1",
        "iso88591",
        "iso_8859-1",
        "iso_8859-1:1987",
        "l1",
        "latin1",
        "us-ascii",
        "windows-1252",
        "x-cp1252",
    }
)


def declared_charset(data: bytes) -> str | None:
    """Return the charset a page's ``<meta>`` declares near its start (None: none)."""
    match = _META_CHARSET.search(data[:PRESCAN_BYTES])
    if match is None:
        return None
    label = match.group(1).decode("ascii").lower()
    if label in _WINDOWS_1252:
        return "cp1252"
    if label.startswith(("utf-16", "utf-32")):
        # A declaration readable as ASCII is not in UTF-16; browsers read UTF-8.
        return "utf-8"
    return label


def decode_page(data: bytes, source: object) -> tuple[str, str] | None:
    """Decode a web page by its byte order mark or declared charset.

    Returns:
        The text and the encoding used, or None when the page has neither.

    Raises:
        InputError: The declared charset is unknown, or the bytes are not in it.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _decode(data[len(bom) :], encoding, source, "its byte order mark")
    declared = declared_charset(data)
    if declared is None:
        return None
    return _decode(data, declared, source, "the charset it declares")


def _decode(data: bytes, encoding: str, source: object, why: str) -> tuple[str, str]:
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{source}: not {encoding} text as {why} says (byte "
            f"0x{data[exc.start]:02x} at offset {exc.start}); save it as UTF-8"
        ) from None
    except (LookupError, UnicodeError, ValueError):
        # Unknown, or a codec that is not a text encoding (rot13, base64, idna).
        raise InputError(
            f"{source}: declares the charset {encoding!r}, which cannot be read; "
            "save it as UTF-8"
        ) from None
