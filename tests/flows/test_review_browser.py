"""The review station in a real browser (headless chromium through selenium), on a real
PostgreSQL: 20 invoices from `docassay synth` plus one of a layout never learned wait for review.
A reviewer opens the queue, opens the unlearned document, corrects its fields by clicking the
words on the page, saves (the layout is learned from the corrected record), then clears the rest
of the queue from the keyboard; the database, the golden set and the next run's result are
checked. Screenshots go to $DOCASSAY_ARTIFACTS (default tests/artifacts/, git-ignored).

Skipped, with the reason, only when chromium or its driver is not installed (CI installs both:
.ci/run)."""
from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from docassay.extractors.parsers import parse
from docassay.extractors.synth.generator import make_format
from docassay.flows import lifecycle
from docassay.flows.batch import collect_sources, ground_truth_sidecar, load_rule_pack, load_schema, run_batch
from docassay.flows.cli import main
from docassay.flows.context import open_context
from docassay.flows.pipeline import process_document
from docassay.flows.report import write_report
from docassay.flows.results import ResultsWriter
from docassay.infra import store
from docassay.infra.config import Settings
from tests.flows.review_fixtures import app_for, gates_job
from tests.flows.test_lifecycle import FORMAT_SEED, ROOT, write
from tests.flows.test_review_actions import DRIFTED, printed_truth

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")
pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                 reason="chromium and chromedriver are not installed "
                                        "(apt-get install chromium chromium-driver; .ci/run does)")]
pytest.importorskip("selenium")

# Where each field of the unlearned document is printed: a word opening its line, and the words
# a reviewer clicks (the first plainly, the others with shift).
CLICKS = {"invoice_number": ("Belegkennung", ["2019-9244"]),
          "issue_date": ("Ausgestellt", ["1.", "November", "2019"]),
          "due_date": ("Fällig", ["1.", "Dezember", "2019"]),
          "net_total": ("MwSt.-Satz", ["14'301.90"]),
          "gross_total": ("8.1%", ["15'454.00"])}


def artifacts() -> Path:
    p = Path(os.environ.get("DOCASSAY_ARTIFACTS") or ROOT / "tests" / "artifacts")
    p.mkdir(parents=True, exist_ok=True)
    return p


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, app, port: int) -> None:
        import uvicorn
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> "Server":
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert self.server.started, "the review server did not start"
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1500,1100",
              "--disable-extensions", "--no-first-run"):
        opts.add_argument(a)
    return webdriver.Chrome(service=Service(DRIVER), options=opts)


def word_indices(path: str) -> dict[str, list[int]]:
    """Per field of CLICKS, the indices (in the page's words) of the words to click."""
    page = parse(path, Path(path).read_bytes()).pages[0]
    out = {}
    for field_name, (opener, texts) in CLICKS.items():
        line = next(ln for ln in page.lines if page.words[ln.word_ids[0]].text == opener)
        ids = list(line.word_ids)
        start = next(k for k in range(len(ids)) if [page.words[i].text for i in ids[k:k + len(texts)]] == texts)
        out[field_name] = ids[start:start + len(texts)]
    return out


def test_a_reviewer_clears_the_queue_in_the_browser(tmp_path: Path, pg_fresh_dsn: str) -> None:
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    assert main(["synth", "--out", str(tmp_path / "synth"), "--formats", "4", "--docs", "5", "--split", "unseen",
                 "--render", "pdf"]) == 0
    sources = collect_sources([str(tmp_path / "synth")], skip=ground_truth_sidecar)
    assert len(sources) == 20
    unlearned, nxt_doc = write(tmp_path / "drift", DRIFTED, [10, 11])
    settings = Settings.load(home=tmp_path / "home", db=pg_fresh_dsn, concurrency=1)
    schema = load_schema(ROOT / "examples/invoices/schema.json")
    rules = load_rule_pack(ROOT / "examples/invoices/rules")
    pending = lifecycle.LifecyclePolicy(new_format_status="pending_review", pending_may_pass=False)
    batch_job = gates_job(schema=schema, rules=rules, settings=settings, policy=pending)
    review_job = gates_job(schema=schema, rules=rules, settings=settings, policy=lifecycle.LifecyclePolicy())
    shots = artifacts()
    with open_context(settings) as ctx:
        rows = run_batch(sources + [unlearned], batch_job, ctx, concurrency=1)
        assert {r.status for r in rows} == {"needs_review"}
        target = rows[-1]
        assert target.format["id"] is None
        truth = printed_truth(10, CLICKS)
        to_fix = {k: v for k, v in truth.items() if target.record.get(k) != v}
        assert to_fix, target.record
        clicks = word_indices(unlearned)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        with Server(app_for(settings, review_job, ctx, port=port), port):
            driver = browser()
            try:
                wait = WebDriverWait(driver, 60, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException))
                driver.get(base + "/")
                assert driver.find_element(By.ID, "queue-title").text == "21 documents waiting"
                assert len(driver.find_elements(By.CSS_SELECTOR, "#queue a.doc")) == 21
                driver.find_element(By.CSS_SELECTOR, f'#queue a.doc[href^="/doc/{target.sha256}"]').click()
                wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "svg .fbox"))
                assert driver.execute_script(
                    "return document.querySelector('svg.sheet image').getBoundingClientRect().width") > 300
                for name in to_fix:
                    driver.find_element(By.CSS_SELECTOR, f'li.field[data-field="{name}"] .fhead').click()
                    for k, i in enumerate(clicks[name]):
                        word = driver.find_element(By.CSS_SELECTOR, f'svg rect.w[data-page="1"][data-i="{i}"]')
                        if k == 0:
                            ActionChains(driver).click(word).perform()
                        else:
                            ActionChains(driver).key_down(Keys.SHIFT).click(word).key_up(Keys.SHIFT).perform()
                    shown = driver.find_element(By.CSS_SELECTOR, f'li.field[data-field="{name}"] input.value')
                    assert shown.get_attribute("value") == " ".join(
                        driver.find_element(By.CSS_SELECTOR, f'svg rect.w[data-i="{i}"] title').get_attribute("textContent")
                        for i in clicks[name])
                driver.save_screenshot(str(shots / "review-document.png"))
                before = driver.current_url
                driver.find_element(By.ID, "save").click()
                wait.until(lambda d: d.current_url != before and d.find_elements(By.ID, "flash"))
                flash = driver.find_element(By.ID, "flash").text
                assert "corrected" in flash and "(new_format)" in flash, flash
                # Clear the rest of the queue from the keyboard: accept, or reject what the schema refuses.
                decided = {"accept": 0, "reject": 0}
                for _ in range(60):
                    if driver.find_elements(By.ID, "empty"):
                        break
                    before = driver.current_url
                    ActionChains(driver).send_keys("a").perform()
                    wait.until(lambda d, before=before: d.execute_script(
                        "var r = document.getElementById('result');"
                        "return location.href !== arguments[0] || (r !== null && r.classList.contains('error'));", before))
                    if driver.current_url == before:
                        ActionChains(driver).send_keys("r").perform()
                        wait.until(lambda d, before=before: d.current_url != before)
                        decided["reject"] += 1
                    else:
                        decided["accept"] += 1
                assert driver.find_elements(By.ID, "empty") and "the queue is empty" in driver.page_source
                assert sum(decided.values()) == 20 and decided["accept"] >= 10, decided
                driver.save_screenshot(str(shots / "review-queue-empty.png"))
            finally:
                driver.quit()
        # The database, the golden set, the new format and the next run.
        doc = store.get_document(ctx.conn, target.sha256)
        assert doc["status"] == "corrected" and all(doc["record"][k] == v for k, v in to_fix.items())
        fid = doc["format_id"]
        assert fid and store.active_version(ctx.conn, fid).produced_by == "review:tester"
        assert [g["sha256"] for g in store.golden_set(ctx.conn, fid)] == [target.sha256]
        review = store.list_reviews(ctx.conn, target.sha256)[0]
        assert review["action"] == "correct" and set(review["corrections"]) == set(to_fix)
        statuses = [store.get_document(ctx.conn, r.sha256)["status"] for r in rows]
        assert "needs_review" not in statuses and statuses.count("reviewed") == decided["accept"]
        again = process_document(nxt_doc, review_job, ctx)
        assert again.format["id"] == fid and again.format["match"] == "known"
        assert again.status in ("passed", "repaired"), again.verification["violations"][:3]
        assert all(again.record[k] == v for k, v in printed_truth(11, to_fix).items())


def test_the_batch_report_opens_offline(tmp_path: Path, pg_fresh_dsn: str) -> None:
    from selenium.webdriver.common.by import By

    settings = Settings.load(home=tmp_path / "home", db=pg_fresh_dsn, concurrency=1)
    schema = load_schema(ROOT / "examples/invoices/schema.json")
    job = gates_job(schema=schema, rules=load_rule_pack(ROOT / "examples/invoices/rules"), settings=settings)
    docs = write(tmp_path / "in", make_format(FORMAT_SEED), [0, 1]) + write(tmp_path / "drift", DRIFTED, [10])
    with open_context(settings) as ctx:
        rows = run_batch(docs, job, ctx, concurrency=1)
    w = ResultsWriter(tmp_path / "out" / "results.jsonl")
    for r in rows:
        w.write(r)
    w.close()
    info = write_report(tmp_path / "out" / "results.jsonl", settings, schema)
    driver = browser()
    try:
        driver.get(info.path.as_uri())
        assert driver.find_element(By.TAG_NAME, "h1").text == "docassay batch report"
        assert len(driver.find_elements(By.CSS_SELECTOR, "article.doc")) == 3
        widths = driver.execute_script(
            "return Array.from(document.querySelectorAll('svg.sheet image')).map(i => i.getBoundingClientRect().width)")
        assert len(widths) == 3 and min(widths) > 300                   # the embedded page images are drawn
        scalars = sum(len([k for k in r.provenance if "/" not in k]) for r in rows)
        item_rows = sum(len({k.split("/")[1] for k in r.provenance if "/" in k}) for r in rows)
        assert len(driver.find_elements(By.CSS_SELECTOR, "svg .fbox")) == scalars      # every field's box
        assert len(driver.find_elements(By.CSS_SELECTOR, "svg rect.item")) == item_rows    # every line-item row
        driver.save_screenshot(str(artifacts() / "report.png"))
        status = rows[-1].status
        driver.find_element(By.CSS_SELECTOR, f'.filters button[data-status="{status}"]').click()   # the inline script runs
        hidden = driver.find_elements(By.CSS_SELECTOR, "article.doc.hidden")
        assert len(hidden) == sum(r.status != status for r in rows)
    finally:
        driver.quit()
