r"""Grammars for constrained decoding on the embedded model, built so that llama.cpp parses them.

A JSON schema becomes a llama.cpp grammar (GBNF) through llama-cpp-python's converter, with
its literals written here: the converter escapes quotes and line ends in a literal but not
the backslash, so an enum value holding ``"`` (JSON text ``\"``) made a literal that ended
early, a grammar llama.cpp could not parse, and a null sampler that crashed the process.
Every constant (enum values, property names) is written as its JSON text, non-ASCII kept as
UTF-8, then escaped for GBNF: backslash, quote, and every control character.

Whether llama.cpp accepted a grammar is checked by building its sampler once
(:func:`check_grammar`); llama.cpp's own messages go to the ``veriscribe.llama`` logger, never
to the terminal (:func:`route_llama_logs`).
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import tempfile
import threading
from typing import Any

from veriscribe.errors import ConstraintError

LOG = logging.getLogger("veriscribe.llama")
# ggml's log levels (ggml.h): none, debug, info, warn, error, continuation of the last
# line. llama-cpp-python's own table is of an older order, that made info lines errors.
_LEVELS = {
    0: logging.DEBUG,
    1: logging.DEBUG,
    2: logging.INFO,
    3: logging.WARNING,
    4: logging.ERROR,
}
_CONTINUED = 5
_ROUTED: list[Any] = []
_ROUTE_LOCK = threading.Lock()
_STDERR_LOCK = threading.Lock()


def gbnf_literal(text: str) -> str:
    """Return ``text`` as a GBNF string literal that llama.cpp reads back exactly."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char == "\\":
            out.append("\\\\")
        elif char == '"':
            out.append('\\"')
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif code < 0x20 or 0x7F <= code <= 0x9F:
            out.append(f"\\x{code:02X}")
        elif 0xD800 <= code <= 0xDFFF:
            # A lone surrogate cannot be encoded as UTF-8 for llama.cpp.
            out.append(f"\\u{code:04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def json_text(value: Any) -> str:
    """Return the JSON text a reply must hold for ``value``, non-ASCII kept as is."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates: their JSON escapes are ASCII and parse back to the same value.
        return json.dumps(value)
    return text


def _converter(prop_order: dict[str, int]) -> Any:
    from llama_cpp.llama_grammar import SchemaConverter

    class _Converter(SchemaConverter):
        """llama-cpp-python's converter with literals escaped for every character."""

        def _format_literal(self, literal: str) -> str:
            return gbnf_literal(literal)

        def _generate_constant_rule(self, value: Any) -> str:
            return gbnf_literal(json_text(value))

    return _Converter(  # type: ignore[no-untyped-call]
        prop_order=prop_order, allow_fetch=False, dotall=False, raw_pattern=False
    )


def schema_grammar(schema: dict[str, Any]) -> str:
    """Return the GBNF grammar that admits exactly the JSON replies ``schema`` allows.

    Raises:
        ConstraintError: the schema has a form the converter cannot turn into a grammar.
    """
    try:
        converter = _converter({})
        resolved = converter.resolve_refs(json.loads(json.dumps(schema)), "schema")
        converter.visit(resolved, "")
        return str(converter.format_grammar())
    except Exception as exc:  # the converter raises bare exceptions of any kind
        raise ConstraintError(
            f"cannot constrain decoding to this JSON schema: {exc}"
        ) from exc


def check_grammar(vocab: Any, grammar: str) -> None:
    """Have llama.cpp parse ``grammar`` against a model's vocabulary.

    Raises:
        ConstraintError: llama.cpp rejected the grammar (its parser's message is logged).
    """
    import llama_cpp

    route_llama_logs()
    # llama.cpp's grammar parser writes its errors straight to the process's stderr:
    # they are read back here and logged, never shown on the terminal.
    with _STDERR_LOCK, tempfile.TemporaryFile() as caught:
        saved = os.dup(2)
        try:
            os.dup2(caught.fileno(), 2)
            sampler = llama_cpp.llama_sampler_init_grammar(
                vocab, grammar.encode("utf-8"), b"root"
            )
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        caught.seek(0)
        said = caught.read().decode("utf-8", "replace").strip()
    if said:
        LOG.warning("llama.cpp on a grammar: %s", said[:2000])
    if not sampler:
        LOG.error("llama.cpp rejected a grammar of %d characters", len(grammar))
        raise ConstraintError(
            "cannot constrain decoding: llama.cpp could not parse the grammar built "
            "for this reply (details in the error log)"
        )
    llama_cpp.llama_sampler_free(sampler)


def route_llama_logs() -> None:
    """Send llama.cpp's log lines to the ``veriscribe.llama`` logger, once per process.

    llama-cpp-python prints llama.cpp's errors (a grammar it cannot parse, with the
    whole grammar) on stderr; here they go where every other log line goes.
    """
    with _ROUTE_LOCK:
        if _ROUTED:
            return
        import llama_cpp

        last = [logging.DEBUG]

        @llama_cpp.llama_log_callback  # type: ignore[untyped-decorator]
        def forward(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
            mapped = (
                last[0] if level == _CONTINUED else _LEVELS.get(level, logging.DEBUG)
            )
            last[0] = mapped
            if LOG.isEnabledFor(mapped):
                LOG.log(mapped, "%s", text.decode("utf-8", "replace").rstrip())

        # The callback must outlive every call into llama.cpp: keep it referenced.
        _ROUTED.append(forward)
        llama_cpp.llama_log_set(forward, ctypes.c_void_p(0))
