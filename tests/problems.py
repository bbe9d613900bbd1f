"""Reading the problem details the HTTP API answers with."""

from __future__ import annotations

import httpx


def problem_detail(response: httpx.Response, status: int) -> str:
    """Return a problem's detail, once the response has the status expected."""
    assert response.status_code == status, response.text
    return str(response.json()["detail"])
