r"""Make text from documents, names and errors safe to show on a terminal.

A title, file name or server message may carry control characters: ``ESC [2J`` clears
the screen, other sequences move the cursor, retitle the window or hide text. Nothing
read from input may drive the terminal, so every control character except newline and
tab is shown as a visible escape (``\x1b``) instead; what follows it is then plain
text.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, and the C1 controls (U+0080-U+009F: U+009B
# is a one-character CSI on some terminals).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_C1 = re.compile(r"[\x80-\x9f]")


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def has_control(text: str) -> bool:
    """Tell whether ``text`` holds a character :func:`sanitize` would escape."""
    return _CONTROL.search(text) is not None


def sanitize(text: str) -> str:
    """Return ``text`` with every terminal control character shown as an escape."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return _CONTROL.sub(_visible, text)


def json_safe(text: str) -> str:
    r"""Return JSON text with C1 controls escaped (``json.dumps`` escapes only C0).

    In JSON text a C1 character can only sit inside a string, where ``\u0080`` is
    the same value, so the document means exactly what it meant.
    """
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
