r"""The terminal: its two consoles, which show text from input safely.

A title, file name or server message may carry control characters: ``ESC [2J`` clears
the screen, other sequences move the cursor, retitle the window or hide text. Nothing
read from input may drive the terminal, so every control character except newline and
tab is shown as a visible escape (``\x1b``) instead; what follows it is then plain
text. The bidirectional controls (``U+202E`` and its kin) are shown the same way
(``\u202e``): they reorder what is displayed, so a name could read as another.

Nor may input style the terminal: a string is always text on these consoles, never
Rich markup or emoji codes. ``[link=...]`` would make a hyperlink, ``[conceal]`` hide
text, and an unmatched ``[/bold]`` (or a model's ``[/INST]``) end the command with an
error. The code's own styling is written as :class:`~rich.text.Text` with styles.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

# The bidirectional formatting characters: marks (ALM, LRM, RLM), embeddings and
# overrides (LRE..RLO) and isolates (LRI..PDI). Each changes the order in which the
# characters around it are displayed.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# C0 controls but tab and newline, DEL, the C1 controls (U+0080-U+009F: U+009B is a
# one-character CSI on some terminals) and the bidirectional controls.
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}]")
# What json.dumps leaves unescaped but a terminal acts on.
_JSON_UNSAFE = re.compile(f"[\\x80-\\x9f{_BIDI}]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def has_control(text: str) -> bool:
    """Tell whether ``text`` holds a character :func:`sanitize` would escape."""
    return _CONTROL.search(text) is not None


def sanitize(text: str) -> str:
    """Return ``text`` with every terminal control character shown as an escape."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return _CONTROL.sub(_visible, text)


def json_safe(text: str) -> str:
    r"""Return JSON text with C1 and bidirectional controls escaped.

    ``json.dumps`` escapes only C0. In JSON text these characters can only sit
    inside a string, where ``\u0080`` is the same value, so the document means
    exactly what it meant.
    """
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class SafeConsole(Console):
    """A console on which every string is text, its control characters shown as escapes.

    Titles, names, ids, paths, quotes, model replies and error messages come from
    input. A string is never read as markup or emoji codes, whatever the caller
    asks (``markup=True`` included): the one way to style is a Text with styles.
    Strings, and Text printed on its own, are made safe before layout (so they are
    sized for the escapes), and every rendered segment once more, while the
    console's own styling and cursor control (separate control segments) pass
    untouched.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Make a console as Rich does, with markup and emoji codes off."""
        kwargs["markup"] = False
        kwargs["emoji"] = False
        super().__init__(*args, **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """Turn a string into plain Text, its control characters made visible."""
        kwargs["markup"] = False
        kwargs["emoji"] = False
        return super().render_str(sanitize(text), **kwargs)

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        """Render as usual, with control characters in the text made visible."""
        if isinstance(renderable, Text) and has_control(renderable.plain):
            renderable = _safe_text(renderable, self)
        for segment in super().render(renderable, options):
            if segment.control or not segment.text:
                yield segment
            else:
                yield Segment(sanitize(segment.text), segment.style)


def _safe_text(text: Text, console: Console) -> Text:
    """Return a copy of ``text`` with control characters escaped, styles kept."""
    parts: list[str | tuple[str, str | Style]] = [
        (sanitize(segment.text), segment.style or "")
        for segment in text.render(console, end="")
    ]
    return Text.assemble(
        *parts,
        justify=text.justify,
        overflow=text.overflow,
        no_wrap=text.no_wrap,
        end=text.end,
    )


stdout = SafeConsole()
"""Where results and reports go."""

stderr = SafeConsole(stderr=True)
"""Where errors, warnings, hints and live progress go."""
