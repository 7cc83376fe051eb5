"""The review station over HTTP (Starlette's TestClient, real PostgreSQL): the queue and a
document's page with its boxes; actions through the shared review code; 127.0.0.1 by default, a
token anywhere else, CSRF on every change, hostile document text escaped, the CSP header."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from docassay.flows.cli import build_parser
from docassay.flows.context import open_context
from docassay.flows.review_app.security import CSP, CSRF_HEADER, SecurityConfig
from docassay.infra import store
from tests.flows.review_fixtures import BASE_URL, app_for, waiting_documents


def csrf_of(html: str) -> str:
    return re.search(r'<meta name="csrf-token" content="([^"]+)">', html).group(1)


def test_queue_document_page_and_actions(tmp_path: Path, pg_fresh_dsn: str) -> None:
    settings, job, rows = waiting_documents(tmp_path, pg_fresh_dsn, 3)
    with open_context(settings) as ctx:
        client = TestClient(app_for(settings, job, ctx), base_url=BASE_URL)
        r = client.get("/")
        assert r.status_code == 200 and r.headers["content-security-policy"] == CSP
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-frame-options"] == "DENY"
        assert "3 documents waiting" in r.text and all(row.sha256 in r.text for row in rows)
        assert "lifecycle/format_pending_review" in r.text
        doc = client.get(f"/doc/{rows[0].sha256}")
        assert doc.status_code == 200
        assert len(re.findall(r'class="fbox tone-(?:ok|doubt|bad)"', doc.text)) >= 4   # a box per field read, whatever its tone
        assert f'href="/doc/{rows[0].sha256}/page/1.png"' in doc.text and 'class="w"' in doc.text
        data = json.loads(re.search(r'<script type="application/json" id="review-data">(.*?)</script>',
                                    doc.text, re.S).group(1))
        assert {f["name"] for f in data["fields"]} >= {"invoice_number", "gross_total"}
        assert data["pages"][0]["words"]                                  # the words a reviewer clicks
        png = client.get(f"/doc/{rows[0].sha256}/page/1.png")
        assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
        cached = list((Path(settings.home) / "cache" / "pages" / rows[0].sha256).glob("page-1-*.png"))
        assert cached and cached[0].read_bytes() == png.content
        assert client.get(f"/doc/{rows[0].sha256}/page/9.png").status_code == 404

        token = csrf_of(doc.text)
        r = client.post(f"/api/doc/{rows[0].sha256}/accept", json={}, headers={CSRF_HEADER: token})
        assert r.status_code == 200, r.text
        assert r.json()["decision"]["status"] == "reviewed"
        name = rows[1].record["invoice_number"]
        r = client.post(f"/api/doc/{rows[1].sha256}/correct", json={"set": {"invoice_number": name + "0"}},
                        headers={CSRF_HEADER: token})
        assert r.status_code == 200 and r.json()["decision"]["status"] == "corrected"
        assert "not taught" in r.json()["summary"]                       # a value not printed teaches nothing
        r = client.post(f"/api/doc/{rows[2].sha256}/correct", json={"set": {"gross_total": "lots"}},
                        headers={CSRF_HEADER: token})
        assert r.status_code == 422 and r.json()["errors"]
        assert store.get_document(ctx.conn, rows[0].sha256)["status"] == "reviewed"
        assert store.get_document(ctx.conn, rows[1].sha256)["record"]["invoice_number"] == name + "0"
        assert store.get_document(ctx.conn, rows[2].sha256)["status"] == "needs_review"
        nxt = client.get(f"/next?after={rows[1].sha256}", follow_redirects=False)
        assert nxt.status_code == 303 and nxt.headers["location"].startswith(f"/doc/{rows[2].sha256}")
        r = client.post(f"/api/doc/{rows[2].sha256}/reject", json={"note": "duplicate"}, headers={CSRF_HEADER: token})
        assert r.status_code == 200 and store.get_document(ctx.conn, rows[2].sha256)["status"] == "rejected"
        done = client.get(f"/next?after={rows[2].sha256}", follow_redirects=True)
        assert "Nothing waiting for review" in done.text and "the queue is empty" in done.text


def test_csrf_and_json_required_for_changes(tmp_path: Path, pg_fresh_dsn: str) -> None:
    settings, job, rows = waiting_documents(tmp_path, pg_fresh_dsn, 1)
    sha = rows[0].sha256
    with open_context(settings) as ctx:
        client = TestClient(app_for(settings, job, ctx), base_url=BASE_URL)
        token = csrf_of(client.get("/").text)
        url = f"/api/doc/{sha}/accept"
        assert client.post(url, json={}).status_code == 403                               # no token
        assert client.post(url, json={}, headers={CSRF_HEADER: "forged"}).status_code == 403
        assert client.post(url, data={"a": "1"}, headers={CSRF_HEADER: token}).status_code == 415   # a plain form
        assert client.post(url, json={}, headers={CSRF_HEADER: token, "origin": "http://evil.example"}).status_code == 403
        fresh = TestClient(client.app, base_url=BASE_URL)                                  # the header without the cookie
        assert fresh.post(url, json={}, headers={CSRF_HEADER: token}).status_code == 403
        assert store.get_document(ctx.conn, sha)["status"] == "needs_review"
        r = client.post(url, json={}, headers={CSRF_HEADER: token, "origin": BASE_URL})
        assert r.status_code == 200 and store.get_document(ctx.conn, sha)["status"] == "reviewed"


def test_loopback_by_default_and_a_token_anywhere_else(tmp_path: Path, pg_fresh_dsn: str) -> None:
    args = build_parser().parse_args(["review", "serve"])
    assert args.host == "127.0.0.1" and SecurityConfig().host == "127.0.0.1" and SecurityConfig().token is None
    with pytest.raises(ValueError, match="needs a token"):
        SecurityConfig(host="0.0.0.0")
    settings, job, rows = waiting_documents(tmp_path, pg_fresh_dsn, 1)
    with open_context(settings) as ctx:
        local = TestClient(app_for(settings, job, ctx), base_url=BASE_URL)
        assert local.get("/").status_code == 200
        assert local.get("/", headers={"host": "attacker.example"}).status_code == 400       # DNS rebinding
        app = app_for(settings, job, ctx, host="10.1.2.3", port=8790, token="s3cret-token")
        remote = TestClient(app, base_url="http://10.1.2.3:8790")
        assert remote.get("/").status_code == 401
        assert remote.get(f"/doc/{rows[0].sha256}/page/1.png").status_code == 401
        assert remote.get("/?token=wrong").status_code == 401
        assert remote.get("/", headers={"authorization": "Bearer s3cret-token"}).status_code == 200
        r = remote.get("/?token=s3cret-token&reason=doubtful", follow_redirects=False)
        assert r.status_code == 303 and "token" not in r.headers["location"] and "reason=doubtful" in r.headers["location"]
        assert "httponly" in r.headers["set-cookie"].lower() and "samesite=strict" in r.headers["set-cookie"].lower()
        assert remote.get("/").status_code == 200                                            # the cookie now
        assert remote.get("/static/review.js").status_code == 200
        assert remote.get("/", headers={"host": "review.example:8790"}).status_code == 200   # the token guards
        pinned = TestClient(app_for(settings, job, ctx, host="10.1.2.3", token="t0ken", allowed_hosts=("review.example",)),
                            base_url="http://review.example:8790")
        assert pinned.get("/", headers={"authorization": "Bearer t0ken"}).status_code == 200
        assert pinned.get("/", headers={"authorization": "Bearer t0ken", "host": "other.example"}).status_code == 400


HOSTILE = '<script>alert("x")</script>"><img src=x onerror=alert(1)>'


def test_hostile_text_is_escaped_everywhere(tmp_path: Path, pg_fresh_dsn: str) -> None:
    settings, job, rows = waiting_documents(tmp_path, pg_fresh_dsn, 1)
    with open_context(settings) as ctx:
        objects = ctx.objects
        text = f"Rechnung Nr. {HOSTILE}\nLieferant {HOSTILE}\n".encode()
        sha = "ab" * 32
        objects.put(f"documents/{sha}.txt", text)
        store.save_document(ctx.conn, sha256=sha, source=f"/in/{HOSTILE}.txt", status="needs_review",
                            format_id=None, format_version=None,
                            record={"invoice_number": HOSTILE, "seller_name": HOSTILE},
                            verification={"score": 0.1, "violations": [
                                {"gate": "rules", "rule": HOSTILE, "field": "invoice_number", "severity": "error",
                                 "message": HOSTILE, "alternatives": [{"field": "invoice_number", "value": HOSTILE}]}]},
                            provenance={"invoice_number": {"page": 1, "bbox": [1, 1, 50, 10], "text": HOSTILE,
                                                           "anchor": HOSTILE}},
                            object_key=f"documents/{sha}.txt")
        client = TestClient(app_for(settings, job, ctx), base_url=BASE_URL)
        for page in (client.get("/").text, client.get(f"/doc/{sha}").text, client.get("/?flash=" + HOSTILE).text):
            assert "<script>alert" not in page and "<img src=x" not in page
            assert "&lt;script&gt;alert" in page or "\\u003cscript\\u003ealert" in page
        doc = client.get(f"/doc/{sha}").text
        assert doc.count("<script") == 2             # the JSON island and /static/review.js, nothing else
        assert '<text class="wt"' in doc              # a text document is drawn from its words
