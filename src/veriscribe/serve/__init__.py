"""The HTTP API of ``veriscribe serve``: the product's services over JSON and events."""

from veriscribe.serve.app import ServeConfig, create_app
from veriscribe.serve.guard import TOKEN_ENV, check_bind, is_loopback, token_from_env

__all__ = ["ServeConfig", "create_app", "TOKEN_ENV", "check_bind", "is_loopback"]
__all__ += ["token_from_env"]
