"""The review station in the browser (`docassay review serve`): the queue, one document's pages
with every field's box, accept / correct (by typing or clicking the words) / reject, all through
flows.review_actions. See app.py for the routes and security.py for the guard."""
from flows.review_app.app import AppConfig, create_app
from flows.review_app.security import SecurityConfig

__all__ = ["AppConfig", "SecurityConfig", "create_app"]
