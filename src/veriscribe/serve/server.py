"""uvicorn, made to drain the application as soon as it starts shutting down."""

from __future__ import annotations

import socket
from collections.abc import Callable

import uvicorn
from fastapi import FastAPI


class DrainingServer(uvicorn.Server):
    """A uvicorn server that tells the application when SIGTERM (or SIGINT) arrives.

    uvicorn first waits for the open connections and only then runs the application's
    shutdown: told at once, the abstract runs stop claiming articles while the answers
    in flight finish, instead of starting new work nobody will wait for.
    """

    def __init__(self, config: uvicorn.Config, on_shutdown: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_shutdown = on_shutdown

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Drain the application, then shut down as uvicorn does."""
        self.on_shutdown()
        await super().shutdown(sockets=sockets)


def draining_server(app: FastAPI, host: str, port: int) -> DrainingServer:
    """Return a server for ``app`` (made by ``create_app``) on ``host:port``."""
    served = app.state.server
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        # Connections get the app's drain time and a little more for the last bytes.
        timeout_graceful_shutdown=int(served.config.drain_s) + 5,
    )
    return DrainingServer(config, on_shutdown=served.drain)
