"""The web view in a real browser: headless Chromium against a real `lazy web` process."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Lazy
from tests.e2e.web.conftest import WebServer

SCREENSHOT_VARIABLE = "LAZY_WEB_SCREENSHOT"
"""Set to a path to save the record page's screenshot there (the README's docs/web-record.png)."""


def test_the_index_is_the_launch_section_and_links_each_record(page: Any, web: WebServer) -> None:
    page.goto(web.url)
    section = page.locator("#section")
    assert section.inner_text().startswith("# Project memory\nThese are the project's memory")
    assert "- deploy-steps (project): How we deploy, again" in section.inner_text()
    page.goto(web.at("/?role=agent"))
    assert page.locator("h1").inner_text() == "What an agent launch injects"
    page.get_by_role("link", name="deploy-steps").click()
    page.wait_for_url(re.compile(r"/record\?name=deploy-steps"))
    assert page.locator("#body").inner_text() == "Run the pipeline."
    assert "Live at revision 4" in page.locator("#state").inner_text()


def test_two_chosen_revisions_are_diffed_across_the_removal(page: Any, web: WebServer) -> None:
    page.goto(web.at("/record?name=deploy-steps"))
    timeline = page.locator("form.timeline").inner_text()
    for label in ("created", "updated", "removed", "revived"):
        assert label in timeline
    page.locator("#from-2").check()
    page.locator("#to-3").check()
    page.locator("#compare").click()
    page.wait_for_url(re.compile(r"(?=.*from=2)(?=.*to=3)"))
    diff = page.locator("#diff").inner_text()
    assert "-state: live" in diff
    assert "+state: removed" in diff
    page.locator("#from-1").check()
    page.locator("#to-4").check()
    page.locator("#compare").click()
    page.wait_for_url(re.compile(r"(?=.*from=1)(?=.*to=4)"))
    diff = page.locator("#diff").inner_text()
    assert "-Run make." in diff
    assert "+Run the pipeline." in diff
    assert "-description: How we deploy\n+description: How we deploy, again" in diff


def test_search_uses_the_query_language(page: Any, web: WebServer) -> None:
    page.goto(web.url)
    page.get_by_role("link", name="Search").click()
    page.get_by_label("query").fill("pipeline type:project")
    page.get_by_label("query").press("Enter")
    page.wait_for_url(re.compile(r"/search\?q="))
    hits = page.locator("#hits li")
    assert hits.count() == 1
    assert hits.first.inner_text().startswith("deploy-steps (project): How we deploy, again")
    assert page.locator("#hits mark").first.inner_text() == "pipeline"
    page.get_by_label("query").fill('"unclosed')
    page.get_by_label("query").press("Enter")
    page.wait_for_selector("#query-error")


def test_a_save_from_the_cli_appears_without_a_reload(
    page: Any, web: WebServer, seeded: Lazy
) -> None:
    from playwright.sync_api import expect

    page.goto(web.url)
    page.evaluate("window.__sameDocument = true")
    saved = seeded("memory", "save", "fresh-note", "-t", "user", "-d", "Written meanwhile")
    assert saved.returncode == 0, saved.stderr
    banner = page.locator("#banner")
    banner.wait_for(state="visible")
    # A locator, not wait_for_function: the page's CSP forbids the eval that one uses.
    expect(page.locator("#section")).to_contain_text("- fresh-note (user): Written meanwhile")
    assert "fresh-note was saved (revision 1)" in banner.inner_text()
    assert page.evaluate("window.__sameDocument") is True


def test_a_body_of_html_runs_nothing_and_reads_as_text(page: Any, web: WebServer) -> None:
    page.goto(web.at("/record?name=xss-probe"))
    body = page.locator("#body")
    assert body.inner_text().startswith("<script>window.__pwned = 'script'</script>")
    assert page.locator("table.facts td").nth(1).inner_text() == "<b>not bold</b>"
    assert page.locator("main b, #body script, #body img, #body a").count() == 0
    assert page.evaluate("window.__pwned") is None
    screenshot = os.environ.get(SCREENSHOT_VARIABLE)
    if screenshot:
        page.goto(web.at("/record?name=deploy-steps&from=1&to=4"))
        page.set_viewport_size({"width": 1100, "height": 900})
        page.screenshot(path=str(Path(screenshot)), full_page=True)
