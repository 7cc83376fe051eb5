"""The review station: a Starlette app on the CLI's database (`docassay review serve`).

    GET  /                           the queue (needs_review first, then doubtful fields);
                                     ?format=&batch=&reason= filter it
    GET  /doc/{sha}                  one document: its pages with every field's box, the fields,
                                     their labels, alternatives and messages
    GET  /doc/{sha}/page/{n}.png     a page image (rendered once, cached under the home)
    GET  /next?after={sha}           the next document of the (filtered) queue, else the queue
    POST /api/doc/{sha}/accept       {"note"}                      -> the decision
    POST /api/doc/{sha}/correct      {"set": {field: text}, "unset": [field], "note"}
    POST /api/doc/{sha}/reject       {"note"}

Every action goes through flows.review_actions, the code `docassay review accept|correct|reject`
runs. Security (host, token, CSRF, CSP) is flows.review_app.security.Guard.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl as urllib_parse_qsl
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from docassay.extractors.errors import InstructionError, ParseError
from docassay.extractors.instructions.executor import execute
from docassay.extractors.instructions.language import Instructions
from docassay.extractors.parsers import parse
from docassay.flows import review_actions as ra
from docassay.flows.page_images import VIEW_WIDTH, PageCache, cache_for, load_bytes
from docassay.flows.review_app.security import Guard, SecurityConfig
from docassay.flows.review_app.templating import environment, page_models
from docassay.flows.review_queue import QueueFilter, build_queue
from docassay.flows.review_view import field_views, item_boxes
from docassay.infra import review_store, store
from docassay.infra.config import Settings
from docassay.infra.errors import DocassayError

__all__ = ["AppConfig", "ReviewApp", "create_app"]

STATIC = Path(__file__).parent / "static"
MAX_BODY = 256 * 1024          # bytes of JSON one action may send
MAX_NOTE = 2000


@dataclass
class AppConfig:
    settings: Settings
    job: Any = None                                # flows.pipeline.Job when a schema was given
    reviewer: str = "reviewer"
    security: SecurityConfig = field(default_factory=SecurityConfig)


class ReviewApp:
    """The routes and the state they share (run context, page cache, templates)."""

    def __init__(self, config: AppConfig, ctx: Any) -> None:
        self.config, self.ctx = config, ctx
        self.session = ra.Session(ctx, config.job)
        self.cache: PageCache = cache_for(config.settings)
        self.env = environment()
        self._lock = threading.Lock()              # one decision at a time: teaching writes versions

    # -- helpers -----------------------------------------------------------------------------------

    def _html(self, template: str, **kw: Any) -> HTMLResponse:
        body = self.env.get_template(template).render(csrf=self.config.security.csrf_token,
                                                      reviewer=self.config.reviewer, **kw)
        return HTMLResponse(body, headers={"cache-control": "no-store"})

    @staticmethod
    def _filter(req: Request) -> QueueFilter:
        q = req.query_params
        return QueueFilter(format_id=q.get("format") or None, run_id=q.get("batch") or None,
                           reason=q.get("reason") or None)

    @staticmethod
    def _filter_query(req: Request) -> str:
        q = {k: req.query_params[k] for k in ("format", "batch", "reason") if req.query_params.get(k)}
        return urlencode(q)

    def _doc(self, sha: str) -> dict | None:
        if not sha or len(sha) > 64 or any(c not in "0123456789abcdef" for c in sha):
            return None
        return store.get_document(self.ctx.conn, sha)

    # -- pages -------------------------------------------------------------------------------------

    def queue(self, req: Request) -> Response:
        conn = self.ctx.conn
        flt = self._filter(req)
        items = build_queue(conn, flt)
        everything = build_queue(conn, QueueFilter()) if (flt.format_id or flt.run_id or flt.reason) else items
        formats = sorted({i.format_id for i in everything if i.format_id})
        reasons = sorted({r for i in everything for r in i.reasons})
        return self._html("queue.html", items=items, flt=flt, formats=formats, reasons=reasons,
                          runs=review_store.recent_runs(conn), query=self._filter_query(req),
                          flash=req.query_params.get("flash", "")[:500])

    def _alternatives(self, doc: dict, data: bytes | None, key: str) -> dict[str, list[dict]]:
        """Every field's other readings with their boxes: the stored version replayed on the page
        (cached per format version)."""
        fid, ver = doc.get("format_id"), doc.get("format_version")
        if data is None or not fid or not ver:
            return {}
        ck = f"{doc['sha256']}/alternatives-{fid}-{int(ver)}.json"
        if self.cache.store.exists(ck):
            return json.loads(self.cache.store.get(ck))
        row = store.get_version(self.ctx.conn, fid, int(ver))
        if row is None:
            return {}
        try:
            ext = execute(Instructions.from_json(row.instructions), parse(key, data, settings=self.config.settings))
        except (InstructionError, ParseError, DocassayError):
            return {}
        out = {name: [{"value": a.value, "text": a.provenance.text, "page": a.provenance.page,
                       "bbox": a.provenance.bbox.as_list(), "how": a.how} for a in alts]
               for name, alts in ext.alternatives.items()}
        self.cache.store.put(ck, json.dumps(out, ensure_ascii=False, default=str).encode())
        return out

    def document(self, req: Request) -> Response:
        sha = req.path_params["sha"]
        doc = self._doc(sha)
        if doc is None:
            return self._html("missing.html", sha=sha[:64])
        data, key = load_bytes(self.ctx.objects, doc.get("object_key"), doc.get("source"))
        pages, why = [], ""
        if data is not None:
            try:
                pages = self.cache.pages(doc["sha256"], key, data, self.config.settings)
            except (ParseError, DocassayError) as exc:
                why = f"the document cannot be read: {exc.message}"
        else:
            why = key
        schema = self.config.job.schema if self.config.job is not None else None
        fields = field_views(doc, schema, self._alternatives(doc, data, key))
        items = item_boxes(doc)
        image = (lambda n: f"/doc/{doc['sha256']}/page/{n}.png") if data is not None and self._has_image(data) else None
        models = page_models(pages, fields, items, image)
        flt_query = self._filter_query(req)
        queue = build_queue(self.ctx.conn, self._filter(req))
        pos = next((i for i, it in enumerate(queue) if it.sha256 == doc["sha256"]), None)
        client = {"sha256": doc["sha256"], "fields": [f.to_json() for f in fields],
                  "pages": [{"number": p.number, "words": [w["text"] for w in p.words]} for p in pages],
                  "next": "/next?" + urlencode({"after": doc["sha256"], **{k: v for k, v in req.query_params.items()
                                                                           if k in ("format", "batch", "reason")}}),
                  "editable": [f.name for f in fields if not f.is_table]}
        return self._html("document.html", doc=doc, fields=fields, pages=models, why=why, client=client,
                          reviews=store.list_reviews(self.ctx.conn, doc["sha256"]), query=flt_query,
                          position=pos, queue_len=len(queue), schema_given=schema is not None,
                          record_items={f.name: f.value for f in fields if f.is_table and isinstance(f.value, list)},
                          flash=req.query_params.get("flash", "")[:500])

    @staticmethod
    def _has_image(data: bytes) -> bool:
        from docassay.flows.page_images import has_image
        return has_image(data)

    def page_image(self, req: Request) -> Response:
        doc = self._doc(req.path_params["sha"])
        if doc is None:
            return Response("no such document", status_code=404, media_type="text/plain")
        data, _key = load_bytes(self.ctx.objects, doc.get("object_key"), doc.get("source"))
        n = int(req.path_params["n"])
        try:
            width = int(req.query_params.get("w", VIEW_WIDTH))
        except ValueError:
            width = VIEW_WIDTH
        png = None
        if data is not None and n >= 1:
            try:
                png = self.cache.image(doc["sha256"], data, n, width)
            except (OSError, ValueError, IndexError, EOFError):
                png = None
        if png is None:
            return Response("no image of this page", status_code=404, media_type="text/plain")
        return Response(png, media_type="image/png", headers={"cache-control": "private, max-age=3600"})

    def next_document(self, req: Request) -> Response:
        after = req.query_params.get("after", "")
        queue = build_queue(self.ctx.conn, self._filter(req))
        rest = [it for it in queue if it.sha256 != after]
        q = self._filter_query(req)
        flash = req.query_params.get("flash", "")[:500]
        if not rest:
            done = (flash + " · " if flash else "") + "the queue is empty"
            return RedirectResponse("/?" + urlencode({**dict(urllib_parse_qsl(q)), "flash": done}), status_code=303)
        return RedirectResponse(f"/doc/{rest[0].sha256}?" + urlencode({**dict(urllib_parse_qsl(q)), "flash": flash}),
                                status_code=303)

    # -- actions -----------------------------------------------------------------------------------

    async def act(self, req: Request) -> Response:
        action = req.path_params["action"]
        sha = req.path_params["sha"]
        body = await req.body()
        if len(body) > MAX_BODY:
            return JSONResponse({"error": "request too large"}, status_code=413)
        try:
            payload = json.loads(body or b"{}")
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, status_code=400)
        if not isinstance(payload, dict):
            return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
        from starlette.concurrency import run_in_threadpool
        return await run_in_threadpool(self._act, action, sha, payload)

    def _act(self, action: str, sha: str, payload: dict) -> Response:
        doc = self._doc(sha)
        if doc is None:
            return JSONResponse({"error": f"no document {sha[:64]!r}"}, status_code=404)
        note = payload.get("note")
        note = str(note)[:MAX_NOTE] if note else None
        by = self.config.reviewer
        try:
            with self._lock:
                if action == "accept":
                    d = ra.accept(self.session, doc["sha256"], by=by, note=note)
                elif action == "reject":
                    d = ra.reject(self.session, doc["sha256"], by=by, note=note)
                elif action == "correct":
                    sets, unset = payload.get("set") or {}, payload.get("unset") or []
                    if not isinstance(sets, dict) or not isinstance(unset, list):
                        return JSONResponse({"error": "set must be an object and unset a list"}, status_code=400)
                    schema = self.config.job.schema if self.config.job is not None else None
                    corrections = ra.corrections_from(doc.get("record") or {}, {str(k): v for k, v in sets.items()},
                                                      [str(u) for u in unset], schema,
                                                      locale=ra.locale_of(self.ctx.conn, doc))
                    d = ra.correct(self.session, doc["sha256"], corrections, by=by, note=note)
                else:
                    return JSONResponse({"error": f"unknown action {action!r}"}, status_code=404)
        except ra.ReviewError as exc:
            return JSONResponse({"error": exc.message}, status_code=400)
        if not d.ok:
            return JSONResponse({"error": "the record does not match the schema", "errors": d.errors,
                                 "decision": d.to_json()}, status_code=422)
        return JSONResponse({"decision": d.to_json(), "summary": d.summary()})

    def routes(self) -> list:
        return [Route("/", self.queue), Route("/doc/{sha}", self.document),
                Route("/doc/{sha}/page/{n:int}.png", self.page_image), Route("/next", self.next_document),
                Route("/api/doc/{sha}/{action}", self.act, methods=["POST"]),
                Mount("/static", StaticFiles(directory=STATIC), name="static")]


def create_app(config: AppConfig, ctx: Any = None) -> Any:
    """The guarded ASGI app; `ctx` (a flows.pipeline.RunContext) is opened from the settings when
    not given, and closed when the app shuts down."""
    from contextlib import asynccontextmanager
    own = ctx is None
    if ctx is None:
        from docassay.extractors.library import FormatLibrary
        from docassay.flows import lifecycle
        from docassay.flows.context import RunContext
        from docassay.infra.db import Database
        ctx = RunContext(Database.from_settings(config.settings), FormatLibrary.from_settings(config.settings),
                         lifecycle.objects_for(config.settings))
    app_state = ReviewApp(config, ctx)

    @asynccontextmanager
    async def lifespan(_app: Starlette):
        try:
            yield
        finally:
            if own:
                ctx.close()

    inner = Starlette(routes=app_state.routes(), lifespan=lifespan)
    inner.state.review = app_state
    guarded = Guard(inner, config.security)
    guarded.review = app_state          # type: ignore[attr-defined]
    return guarded
