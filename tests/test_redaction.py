"""The one redaction: every form a password, token or key takes in a URL, DSN or error."""

from __future__ import annotations

import time

import pytest

from veriscribe.errors import ConfigError
from veriscribe.redaction import REDACTED, redact, redact_target, secrets_in
from veriscribe.store.db import shown_target

SECRET = "hunter2pw"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # URL userinfo, with an '@' in the password too.
        (f"postgresql://alice:{SECRET}@db.example:5432/v", "@db.example:5432/v"),
        (f"postgresql://alice:p@{SECRET}@db.example/v", "@db.example/v"),
        (f"http://user:{SECRET}@host/v1", "http://[REDACTED]@host/v1"),
        # A bad percent escape, as given and as libpq quotes it back.
        ("postgresql://alice:hunt%zzer2@127.0.0.1:1/v", "127.0.0.1:1/v"),
        ('invalid percent-encoded token: "hunt%zzer2"', "invalid percent-encoded"),
        # Query parameters, any spelling and case.
        (f"postgresql://h/v?password={SECRET}&sslmode=require", "&sslmode=require"),
        (f"http://h/v1?api-token={SECRET}&x=1", "?api-token="),
        # libpq reads a '#' as part of a query value: it is hidden with it.
        (f"http://h/v1?X-Api-Key={SECRET}#top", "?X-Api-Key="),
        (f"http://h/api/f?code={SECRET}", "?code="),
        (f"http://h/v1?apiKey={SECRET}", "?apiKey="),
        (f"http://h/v1?a=1&access_token={SECRET}", "?a=1&access_token="),
        (f"http://h/v1?client_secret={SECRET}", "?client_secret="),
        (f"http://h/v1?auth={SECRET}", "?auth="),
        (f"http://h/v1?PWD={SECRET}", "?PWD="),
        (f"http://h/v1?key={SECRET}", "?key="),
        # libpq keyword DSNs, plain and quoted.
        (f"host=db password={SECRET} dbname=v", "dbname=v"),
        (f"host=db PASSWORD = '{SECRET} x\\'y' dbname=v", "dbname=v"),
        (f"host=db sslpassword={SECRET}", "host=db"),
        # Percent-encoded inside another URL.
        (f"next=http%3A%2F%2Fu%3A{SECRET}%40h%2F", "%40h%2F"),
        (f"next=http%3A%2F%2Fh%2F%3Fapi_key%3D{SECRET}%26a%3D1", "%26a%3D1"),
        # JSON pairs and authorization headers.
        (f'{{"api_key": "{SECRET}", "n": 1}}', '"n": 1'),
        (f"Authorization: Bearer {SECRET}", "Authorization: Bearer"),
        (f"authorization=Bearer {SECRET}", "authorization="),
    ],
)
def test_every_form_of_a_secret_is_hidden(text: str, kept: str) -> None:
    out = redact(text, {})
    for secret in (SECRET, "hunt%zzer2", "hunter2"):
        assert secret not in out, out
    assert REDACTED in out and kept in out


def test_plain_parameters_and_words_are_left_alone() -> None:
    text = (
        "max_tokens=512 prompt_tokens=9 keyword=3 passage_id=7 monkey=2 "
        "http://h:8080/v1?model=qwen&seed=1 KeyError: 'x' postgresql://alice@h/v "
        "exit code=3 status_code=500 http://h:8080/v1 is down"
    )
    assert redact(text, {}) == text


def test_secret_environment_values_are_hidden_percent_encoded_too() -> None:
    env = {"DB_PASSWORD": "p@ss/word 1"}
    out = redact("url http://h/?q=p%40ss%2Fword%201 and p@ss/word 1", env)
    assert "p@ss" not in out and "p%40ss" not in out


def test_given_secrets_are_hidden_in_any_form_libpq_quotes_them() -> None:
    message = 'invalid value "s3%cr" for the decoded s3\x25cr and s3%25cr'
    out = redact(message, {}, also=["s3%cr"])
    assert "s3%cr" not in out and "s3%25cr" not in out


def test_secrets_in_a_dsn_are_found_decoded_and_not_the_user_name() -> None:
    found = secrets_in("postgresql://alice:p%40ss@h/v?sslkey=/k&api-token=tk1")
    assert "p%40ss" in found and "p@ss" in found and "tk1" in found
    assert "alice" not in found and not any("alice" in value for value in found)
    assert secrets_in("host=h password='a b' port=5") == ["a b"]


def test_a_shown_database_hides_its_password_in_both_dsn_forms() -> None:
    assert SECRET not in shown_target(f"postgresql://u:{SECRET}@h/v")
    assert SECRET not in shown_target(f"postgresql://u@h/v?password={SECRET}")
    assert SECRET not in shown_target(f"host=h password={SECRET}")


def test_an_error_of_the_project_never_holds_a_secret() -> None:
    error = ConfigError(f"cannot use http://u:{SECRET}@h/v1?token=tk-0123456")
    assert SECRET not in error.user_message and SECRET not in str(error)
    assert "tk-0123456" not in error.user_message


@pytest.mark.parametrize(
    "text",
    ["a=" * 50_000, "a-" * 50_000, " token_" * 20_000, "http://" * 20_000]
    + ["%3A%2F%2F" + "a%3A" * 20_000, '"token": "' * 10_000]
    + ["x://a:" + " " * 100_000, "x://a:b@" * 20_000, "x://a:b/" * 20_000]
    + ["?password=a&" * 20_000, "password=a b " * 20_000],
)
def test_redaction_is_linear_on_hostile_text(text: str) -> None:
    # Each took minutes when a pattern backtracked over the rest of the text, or
    # when a setting read whole was cut into a piece at every character.
    started = time.perf_counter()
    redact(text, {})
    redact_target(text)
    assert time.perf_counter() - started < 5


def test_a_known_secret_inside_a_parameter_name_does_not_unveil_its_value() -> None:
    # "secret" is a known value (a password remembered from a DSN) and also part of
    # the parameter's name: the parameter's own value is hidden all the same.
    out = redact("http://h/v1?client_secret=hunter2pw&n=1", {}, also=["secret"])
    assert "hunter2pw" not in out, out
    assert "secret" not in out and out.endswith("&n=1")


def test_a_dsn_in_any_variable_hides_its_password_wherever_it_is_quoted() -> None:
    env = {"VERISCRIBE_DB": "postgresql://alice:my pa/ss#word@h/v", "HOME": "/root"}
    # A driver quotes the password back, or a piece of it cut at the '/'.
    out = redact('bad port "my pa" then my pa/ss#word and ss#word', env)
    assert "my pa" not in out and "ss#word" not in out, out
    assert redact("/root and alice stay", env) == "/root and alice stay"
