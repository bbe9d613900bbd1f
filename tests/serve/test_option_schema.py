"""One options schema per job: the API's request bodies and the command line's flags
take every shared option as the options models define it."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from veriscribe.cli.reference import command as root
from veriscribe.options import AbstractOptions, QAOptions
from veriscribe.serve.app import ServeConfig, create_app
from veriscribe.serve.models import AbstractRequest, AnswerRequest, VerifyRequest
from veriscribe.settings import Settings

JOBS: list[tuple[str, type[BaseModel], type[BaseModel]]] = [
    ("abstract", AbstractOptions, AbstractRequest),
    ("batch", AbstractOptions, AbstractRequest),
    ("ask", QAOptions, AnswerRequest),
    ("chat", QAOptions, AnswerRequest),
    ("verify", QAOptions, VerifyRequest),
]
"""Each command with options, the options model it takes, and the API's request."""


def command(name: str) -> Any:
    """Return a top-level command as the command line parses it (Typer's own click)."""
    context = root.make_context("veriscribe", [], resilient_parsing=True)
    found = root.get_command(context, name)
    assert found is not None
    return found


def shared(cmd: Any, options: type[BaseModel]) -> dict[str, Any]:
    """Return the command's visible options that set a field of ``options``, by name."""
    return {
        param.name: param
        for param in cmd.params
        if param.name in options.model_fields and not param.hidden
    }


def bounds(options: type[BaseModel], name: str) -> tuple[Any, Any]:
    """Return a field's ``ge`` and ``le`` (None: unbounded)."""
    low = high = None
    for rule in options.model_fields[name].metadata:
        low = getattr(rule, "ge", low)
        high = getattr(rule, "le", high)
    return low, high


@pytest.mark.parametrize(("name", "options", "request_model"), JOBS)
def test_the_command_and_the_api_take_the_same_options(
    name: str, options: type[BaseModel], request_model: type[BaseModel]
) -> None:
    """No front end has an option the other lacks (the API once had no ``words``)."""
    on_cli = set(shared(command(name), options))
    on_api = set(request_model.model_fields) & set(options.model_fields)
    assert on_cli == on_api


@pytest.mark.parametrize(("name", "options", "request_model"), JOBS)
def test_flags_take_the_options_defaults_help_and_bounds(
    name: str, options: type[BaseModel], request_model: type[BaseModel]
) -> None:
    """Each flag's default, help and bounds are its field's, its name the field's."""
    params = shared(command(name), options)
    assert params
    for field_name, param in params.items():
        field = options.model_fields[field_name]
        assert param.default == field.default, field_name
        assert param.help.startswith(" ".join((field.description or "").split()))
        assert "--" + field_name.replace("_", "-") in param.opts, field_name
        low, high = bounds(options, field_name)
        if low is not None and high is not None:
            assert param.help.endswith(f"({low} to {high})"), field_name
        elif low is not None:
            assert param.help.endswith(f"({low} or more)"), field_name


@pytest.mark.parametrize(("name", "options", "request_model"), JOBS)
def test_request_fields_are_the_options_fields(
    name: str, options: type[BaseModel], request_model: type[BaseModel]
) -> None:
    """A request's option has its field's default, bounds and description."""
    for field_name, field in request_model.model_fields.items():
        if field_name not in options.model_fields:
            continue
        own = options.model_fields[field_name]
        assert field.default == own.default, field_name
        assert field.description == own.description, field_name
        assert bounds(request_model, field_name) == bounds(options, field_name)


def test_the_openapi_document_shows_the_bounds_and_descriptions() -> None:
    api = create_app(ServeConfig(settings=Settings(db=":memory:"), resume_runs=False))
    schemas = api.openapi()["components"]["schemas"]
    k = schemas["AnswerRequest"]["properties"]["k"]
    assert (k["minimum"], k["maximum"], k["default"]) == (1, 50, QAOptions().k)
    assert k["description"] == QAOptions.model_fields["k"].description
    window = schemas["VerifyRequest"]["properties"]["window"]
    assert (window["minimum"], window["maximum"]) == (0, 20)
    words = schemas["AbstractRequest"]["properties"]["words"]
    assert words["default"] == AbstractOptions().words and words["description"]
    for name in ("AnswerRequest", "VerifyRequest", "AbstractRequest"):
        for field, spec in schemas[name]["properties"].items():
            if field in QAOptions.model_fields or field in AbstractOptions.model_fields:
                assert spec.get("description"), f"{name}.{field} is not described"


def test_a_request_builds_the_options_it_names() -> None:
    answer = AnswerRequest(question="Why?", corpus="c", k=7, judge=False)
    assert answer.options() == QAOptions(k=7, judge=False)
    assert AbstractRequest(words=0).options() == AbstractOptions(words=0)


def test_verify_takes_the_window_under_its_old_name() -> None:
    """``k``, the window's name before ``window``, still sets it for one release."""
    assert VerifyRequest(answer="A.", corpus="c", k=3).window == 3  # type: ignore[call-arg]
    assert VerifyRequest(answer="A.", corpus="c", window=2).window == 2
