"""Parse XML without expanding any entity a document declares.

Entity declarations are where XML bombs ("billion laughs") and external-entity reads
live, and neither JATS articles nor guidelines need them. Whether a document declares
one is decided by the parser itself, through expat's declaration events, never by a
pattern over the text: a DOCTYPE can hide its internal subset behind quoted ``>`` or
``]`` characters that a regular expression misreads. A declaration aborts the parse the
moment expat reports it, before any reference to it is expanded. No DTD is fetched;
named character entities of the JATS DTDs that a document uses without declaring them
are resolved from the HTML entity table.

Elements nest at most :data:`MAX_DEPTH` deep. Real articles and guidelines stay far
below it (MathML included); a deeper document is refused while it is parsed, so the
readers' recursive walks over the tree never run out of stack.
"""

from __future__ import annotations

import html.entities
from pathlib import Path
from xml.etree.ElementTree import Element, TreeBuilder
from xml.parsers import expat

from veriscribe.errors import InputError

MAX_DEPTH = 500


class _RefusedEntity(Exception):
    """An entity declaration: refused before anything is expanded."""


class _TooDeep(Exception):
    """Elements nested deeper than :data:`MAX_DEPTH`."""


def parse_xml(data: bytes | str, source: Path | str) -> Element:
    """Parse XML into an element tree without expanding any declared entity.

    Element names keep their prefixes (``mml:math``); no namespace processing is done.

    Raises:
        InputError: The document declares entities (in its DOCTYPE's internal subset
            or anywhere else), nests elements deeper than :data:`MAX_DEPTH`, names an
            encoding that cannot be read, or is not well-formed XML.
    """
    builder = TreeBuilder()
    depth = 0
    elements = 0  # started so far: none while the XML declaration is read
    parser = expat.ParserCreate()
    # Never read a parameter entity or an external DTD subset.
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def refuse(*_args: object) -> int:
        raise _RefusedEntity

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal depth, elements
        depth += 1
        elements += 1
        if depth > MAX_DEPTH:
            raise _TooDeep
        builder.start(tag, attrs)

    def end(tag: str) -> None:
        nonlocal depth
        depth -= 1
        builder.end(tag)

    def skipped(name: str, is_parameter_entity: bool) -> None:
        # Only reached in documents whose DTD is external and therefore not read.
        if not is_parameter_entity and name in html.entities.html5:
            builder.data(html.entities.html5[name])
        elif not is_parameter_entity and name + ";" in html.entities.html5:
            builder.data(html.entities.html5[name + ";"])

    # Internal and external, general and parameter entity declarations all arrive
    # here, whatever the DOCTYPE around them looks like.
    parser.EntityDeclHandler = refuse
    parser.UnparsedEntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = builder.data
    parser.SkippedEntityHandler = skipped
    try:
        parser.Parse(data, True)
    except _RefusedEntity:
        raise InputError(
            f"{source}: the XML declares entities (entity declarations are refused "
            "for safety)"
        ) from None
    except _TooDeep:
        raise InputError(
            f"{source}: elements nested more than {MAX_DEPTH} deep (refused)"
        ) from None
    except expat.ExpatError as exc:
        raise InputError(f"{source}: malformed XML ({exc})") from None
    except (LookupError, UnicodeError, ValueError) as exc:
        if elements:
            raise  # not the declaration's encoding: a bug, reported as one
        # The encoding named in the XML declaration is unknown to Python ("unknown
        # encoding: x-nonsense"), not a text encoding, or one expat cannot use.
        raise InputError(
            f"{source}: the encoding its XML declaration names cannot be read "
            f"({exc}); save it as UTF-8"
        ) from None
    root: Element = builder.close()
    return root
