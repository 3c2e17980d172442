"""The web table served by uvicorn on a free loopback port in a thread, for the tests that talk
to it over HTTP (``tests/test_web.py``, ``tests/test_web_browser.py``)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator


def serve(app) -> Iterator[str]:
    """Start ``app`` on 127.0.0.1 and yield its base URL; stop it when resumed."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)
