"""The review station in the browser (`docassay review serve`): the queue, one document's pages
with every field's box, accept / correct (by typing or clicking the words) / reject, all through
flows.review_actions. See app.py for the routes and security.py for the guard.

`create_app`, `AppConfig` and `SecurityConfig` load on first use: the CLI registers `review serve`
(command.py) without importing the web stack, so `docassay --help` stays fast."""
from __future__ import annotations

from typing import Any

__all__ = ["AppConfig", "SecurityConfig", "create_app"]


def __getattr__(name: str) -> Any:
    if name in ("AppConfig", "create_app"):
        from docassay.flows.review_app import app
        return getattr(app, name)
    if name == "SecurityConfig":
        from docassay.flows.review_app.security import SecurityConfig
        return SecurityConfig
    raise AttributeError(name)
