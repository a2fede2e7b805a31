"""Browser: a shared link carrying markdown payloads fetches nothing from outside and shows no live link or styled text.

Every request the page makes is recorded (Playwright's `page.on("request")`) while the links from issue 12 are
opened; an image payload rendered as markdown would make Chromium fetch http://attacker/pixel.png. The app's own
page icon is a local file too (a `:material/…:` icon is fetched from fonts.gstatic.com on every page load).
"""

from urllib.parse import quote, urlsplit

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

EXCEPTION = '[data-testid="stException"]'
LINK = "[Click here to re-login](https://evil.example/login)"
IMAGE = "![x](http://attacker/pixel.png)"
DIRECTIVE = ":red[Budget approved by finance]"
HTML = '<a href="https://evil.example">open</a><img src="http://attacker/tag.png">'
BARE = "Log in at https://evil.example/x or www.evil.example"
LINKS = {
    "name": f"name={quote(LINK)}",
    "image-name": f"name={quote(IMAGE)}",
    "baseline": f"base.name={quote(IMAGE)}",
    "parameter-name": f"{quote(IMAGE)}=1&{quote(LINK)}=2",
    "rejected-value": f"gpu_count={quote(IMAGE)}&mfu={quote(DIRECTIVE)}",
    "directive-and-html": f"name={quote(DIRECTIVE)}&base.name={quote(HTML)}",
    "bare-url": f"name={quote(BARE)}",
}
LOCAL_SCHEMES = {"data", "blob", "about"}


@pytest.mark.parametrize("query", LINKS.values(), ids=list(LINKS))
def test_payload_links_fetch_nothing_from_outside(page, app_url, wait_for_app, query):
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{app_url}/?{query}")
    wait_for_app(page)
    local = urlsplit(app_url).netloc
    outside = [url for url in requests
               if urlsplit(url).scheme not in LOCAL_SCHEMES and urlsplit(url).netloc != local]
    assert outside == []
    main = page.locator('[data-testid="stMain"]')
    expect(main.locator('a[href*="evil.example"]')).to_have_count(0)
    expect(main.locator('img[src*="attacker"]')).to_have_count(0)
    expect(main.locator('[data-testid="stMarkdownColoredText"], span[style*="color"]').filter(
        has_text="Budget approved")).to_have_count(0)
    expect(page.locator(EXCEPTION)).to_have_count(0)
