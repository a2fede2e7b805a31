"""Smoke test: every page of the router renders without an exception."""

import pytest


@pytest.mark.smoke
@pytest.mark.parametrize("page", ["app_pages/plan.py", "app_pages/compare.py", "app_pages/retro.py",
                                  "app_pages/imports.py", "app_pages/method.py"])
def test_page_renders(app, page):
    at = app.run()
    at.switch_page(page).run()
    assert not at.exception
    assert at.title or at.markdown
