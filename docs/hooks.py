"""MkDocs hooks: reference tables rendered from the code at build time.

A page asks for a table with a marker line, ``<!-- generated: NAME -->``; the build
replaces it with what the code says now, so option defaults, environment variables,
the HTTP schema and the error classes cannot drift from the documentation. An unknown
NAME fails the build.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
# Document the tree being built, not whatever veriscribe the environment has installed.
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

MARKER = re.compile(r"^<!-- generated: ([a-z-]+)(?: ([\w.]+))? -->$", re.MULTILINE)


def cell(text: object) -> str:
    """Return text that fits one Markdown table cell."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    # Help texts write placeholders such as ollama:<m>, which Markdown would take for HTML.
    return text.replace("<", "&lt;").replace(">", "&gt;")


def code(text: object) -> str:
    """Return text as inline code in a table cell."""
    value = str(text).replace("|", "\\|")
    return f"`` {value} ``" if "`" in value else f"`{value}`"


def type_name(annotation: Any) -> str:
    """Return a short readable name for a field's type."""
    text = getattr(annotation, "__name__", None) or str(annotation)
    text = str(annotation) if "[" in str(annotation) else text
    text = re.sub(r"\b(?:typing|pathlib|veriscribe\.[a-z_.]+)\.", "", text)
    return text.replace("NoneType", "None")


def default_text(field: Any) -> str:
    """Return a field's default as a user would write it."""
    from pydantic_core import PydanticUndefined

    if field.default_factory is not None:
        value = field.default_factory()
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if isinstance(value, Path):
        home = str(Path.home())
        text = str(value)
        return code("~" + text[len(home) :] if text.startswith(home) else text)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return code(str(value).lower())
    if isinstance(value, list) and not value:
        return "none"
    return code(value)


def settings_rows() -> Iterator[tuple[str, Any, str]]:
    """Yield (variable, field, owner) for every field of the settings tree."""
    from pydantic import BaseModel

    from veriscribe.settings import Settings

    prefix = Settings.model_config.get("env_prefix", "")
    delimiter = Settings.model_config.get("env_nested_delimiter") or "__"

    def walk(model: type[BaseModel], path: str) -> Iterator[tuple[str, Any, str]]:
        for name, field in model.model_fields.items():
            nested = field.annotation
            if inspect.isclass(nested) and issubclass(nested, BaseModel):
                yield from walk(nested, f"{path}{name.upper()}{delimiter}")
            else:
                yield f"{prefix}{path}{name.upper()}", field, model.__name__

    yield from walk(Settings, "")


def settings_table() -> str:
    """Render every setting: its variable, type, default and description."""
    lines = [
        "| variable | type | default | meaning |",
        "|---|---|---|---|",
    ]
    for variable, field, _owner in settings_rows():
        lines.append(
            f"| {code(variable)} | {cell(type_name(field.annotation))} | "
            f"{default_text(field)} | {cell(field.description or '')} |"
        )
    return "\n".join(lines)


ENV_LITERAL = re.compile(r"""["']((?:VERISCRIBE|OLLAMA|OPENAI)_[A-Z][A-Z0-9_]+)["']""")


def environment_table() -> str:
    """Render the variables the code reads directly, outside the settings tree."""
    in_tree = {variable for variable, _field, _owner in settings_rows()}
    found: dict[str, set[str]] = {}
    for path in sorted((SRC / "veriscribe").rglob("*.py")):
        for name in ENV_LITERAL.findall(path.read_text(encoding="utf-8")):
            if name not in in_tree:
                module = path.relative_to(SRC).with_suffix("").as_posix()
                found.setdefault(name, set()).add(module.replace("/", "."))
    lines = ["| variable | read by |", "|---|---|"]
    for name in sorted(found):
        modules = ", ".join(code(m) for m in sorted(found[name]))
        lines.append(f"| {code(name)} | {modules} |")
    return "\n".join(lines)


def error_table() -> str:
    """Render the error classes: what each means and whether a retry can help."""
    import veriscribe.errors as errors

    classes = [
        obj
        for obj in vars(errors).values()
        if inspect.isclass(obj)
        and issubclass(obj, errors.VeriscribeError)
        and obj.__module__ == errors.__name__
    ]
    lines = ["| error | is a | retried | meaning |", "|---|---|---|---|"]
    for cls in classes:
        parent = cls.__mro__[1].__name__ if cls is not errors.VeriscribeError else ""
        doc = inspect.getdoc(cls) or ""
        first = doc.split("\n\n")[0]
        retried = "yes" if issubclass(cls, errors.RETRYABLE_ERRORS) else "no"
        lines.append(
            f"| {code(cls.__name__)} | {code(parent) if parent else ''} | "
            f"{retried} | {cell(first)} |"
        )
    return "\n".join(lines)


def openapi_document() -> dict[str, Any]:
    """Return the HTTP API's OpenAPI document, from the app ``serve`` runs."""
    from veriscribe.serve.app import ServeConfig, create_app
    from veriscribe.settings import Settings

    app = create_app(ServeConfig(settings=Settings(db=":memory:"), resume_runs=False))
    return app.openapi()


def schema_ref(schema: dict[str, Any]) -> str:
    """Return a short name for a request or response schema."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#schema-{name.lower()})"
    if schema.get("type") == "array" and "items" in schema:
        return f"list of {schema_ref(schema['items'])}"
    for either in ("anyOf", "oneOf"):
        if either in schema:
            return " or ".join(schema_ref(s) for s in schema[either])
    return code(schema.get("type", "object"))


def bounds_text(spec: dict[str, Any]) -> str:
    """Return the bounds of a number field, as ``1 to 50`` or ``0 or more``."""
    low, high = spec.get("minimum"), spec.get("maximum")
    if low is not None and high is not None:
        return f"{low:g} to {high:g}"
    if low is not None:
        return f"{low:g} or more"
    if high is not None:
        return f"at most {high:g}"
    return ""


def openapi_markdown() -> str:
    """Render every route with its parameters, body, responses and every schema."""
    doc = openapi_document()
    out: list[str] = [
        f"OpenAPI {doc['openapi']}, API version {doc['info']['version']}. "
        "The same document is served at `/openapi.json`.",
        "",
    ]
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            out.append(f"### `{method.upper()} {path}`")
            out.append("")
            summary = op.get("summary") or ""
            if summary:
                out.append(cell(summary) + ".")
            description = op.get("description")
            if description:
                out += ["", description.strip()]
            out.append("")
            params = op.get("parameters", [])
            if params:
                out += ["| parameter | in | required | type |", "|---|---|---|---|"]
                for p in params:
                    out.append(
                        f"| {code(p['name'])} | {p['in']} | "
                        f"{'yes' if p.get('required') else 'no'} | "
                        f"{schema_ref(p.get('schema', {}))} |"
                    )
                out.append("")
            body = op.get("requestBody", {}).get("content", {})
            for media, content in body.items():
                out.append(
                    f"Body ({code(media)}): {schema_ref(content.get('schema', {}))}"
                )
                out.append("")
            out += ["| status | meaning | body |", "|---|---|---|"]
            for status, response in op.get("responses", {}).items():
                media = response.get("content", {})
                shapes = ", ".join(
                    f"{code(m)} {schema_ref(c.get('schema', {}))}"
                    for m, c in media.items()
                )
                out.append(
                    f"| {status} | {cell(response.get('description', ''))} | {shapes} |"
                )
            out.append("")
    out += ["## Schemas", ""]
    for name, schema in doc.get("components", {}).get("schemas", {}).items():
        out.append(f"### {name} {{#schema-{name.lower()}}}")
        out.append("")
        if schema.get("description"):
            out += [cell(schema["description"]), ""]
        if schema.get("allOf"):
            bases = ", ".join(schema_ref(base) for base in schema["allOf"])
            out += [f"The fields of {bases}, and these:", ""]
        props = schema.get("properties", {})
        if props:
            required = set(schema.get("required", []))
            out += ["| field | type | required | meaning |", "|---|---|---|---|"]
            for field, spec in props.items():
                kind = (
                    schema_ref(spec)
                    if ("$ref" in spec or "anyOf" in spec)
                    else (code(spec.get("type", "")) if "type" in spec else "")
                )
                if "enum" in spec:
                    kind = " \\| ".join(code(v) for v in spec["enum"])
                elif "const" in spec:
                    kind = code(spec["const"])
                notes = [bounds_text(spec)]
                if "default" in spec:
                    notes.append(f"default {code(json.dumps(spec['default']))}")
                desc = spec.get("description", "")
                if any(notes):
                    desc = f"{desc} ({'; '.join(note for note in notes if note)})"
                out.append(
                    f"| {code(field)} | {kind} | {'yes' if field in required else 'no'} "
                    f"| {cell(desc)} |"
                )
            out.append("")
        elif "enum" in schema:
            out += ["One of " + ", ".join(code(v) for v in schema["enum"]) + ".", ""]
        elif "oneOf" in schema:
            key = schema.get("discriminator", {}).get("propertyName")
            told = f", told apart by {code(key)}" if key else ""
            choices = ", ".join(schema_ref(s) for s in schema["oneOf"])
            out += [f"One of {choices}{told}.", ""]
    return "\n".join(out)


def attribute_docs(cls: type) -> dict[str, str]:
    """Return the docstrings written under a class's fields, its bases' included."""
    import ast

    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__ in {"builtins", "pydantic.main"}:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        first = tree.body[0] if tree.body else None
        body = first.body if isinstance(first, ast.ClassDef) else []
        for node, after in zip(body, [*body[1:], None], strict=True):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


def model_fields_table(target: str) -> str:
    """Render the JSON fields of a result model: name, type and what each holds."""
    import importlib

    module_name, _, name = target.rpartition(".")
    cls = getattr(importlib.import_module(module_name), name)
    docs = attribute_docs(cls)
    lines = [
        f"`{name}`: {cell(inspect.getdoc(cls) or '')}",
        "",
        "| field | type | meaning |",
        "|---|---|---|",
    ]
    for field_name, field in cls.model_fields.items():
        meaning = field.description or docs.get(field_name, "")
        lines.append(
            f"| {code(field_name)} | {cell(type_name(field.annotation))} | "
            f"{cell(meaning)} |"
        )
    return "\n".join(lines)


def cli_markdown() -> str:
    """Render every command: its help, usage, arguments and options, as ``--help`` does.

    The Typer app is walked as the click command ``typer.main.get_command`` makes of it
    (``veriscribe.cli.reference.command``), and each parameter is described by the
    help record ``--help`` prints. (mkdocs-click cannot read it: Typer carries a click of
    its own, whose parameters are not ``click.Option`` instances.)
    """
    from veriscribe.cli.reference import command

    context_type = type(command.make_context("veriscribe", [], resilient_parsing=True))
    out: list[str] = []

    def walk(cmd: Any, ctx: Any, path: list[str], depth: int) -> None:
        if getattr(cmd, "hidden", False):
            return
        name = " ".join(path)
        out.append(f"{'#' * min(depth, 6)} `{name}`")
        out.append("")
        if cmd.help:
            out.extend([inspect.cleandoc(cmd.help), ""])
        pieces = " ".join(cmd.collect_usage_pieces(ctx))
        out.extend(["```text", f"{name} {pieces}".rstrip(), "```", ""])
        rows = []
        for param in cmd.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None or param.name == "help":
                continue
            names, text = record
            rows.append(f"| {code(names)} | {cell(text)} |")
        if rows:
            out.extend(
                ["| argument or option | what it does |", "|---|---|", *rows, ""]
            )
        if hasattr(cmd, "list_commands"):
            for sub_name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, sub_name)
                if sub is not None:
                    sub_ctx = context_type(sub, info_name=sub_name, parent=ctx)
                    walk(sub, sub_ctx, [*path, sub_name], depth + 1)

    walk(command, context_type(command, info_name="veriscribe"), ["veriscribe"], 2)
    return "\n".join(out)


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_markdown,
    "settings": settings_table,
    "environment": environment_table,
    "errors": error_table,
    "openapi": openapi_markdown,
}


def render(markdown: str) -> str:
    """Replace every marker in ``markdown`` with its generated text."""

    def replace(match: re.Match[str]) -> str:
        name, target = match.group(1), match.group(2)
        if name == "fields" and target:
            return model_fields_table(target)
        if name not in GENERATORS:
            raise ValueError(f"unknown generated table {name!r}")
        return GENERATORS[name]()

    return MARKER.sub(replace, markdown)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs hook: render the generated tables a page asks for."""
    return render(markdown)
