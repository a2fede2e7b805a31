"""AppTest: the Method page has a contents list, and shows no code paths or scenario keys."""

import re

from dashboard.ui.method_text import readable, slug


def test_the_method_page_opens_on_a_contents_list_of_every_section(app):
    at = app.run()
    at.switch_page("app_pages/method.py").run()
    assert not at.exception
    contents = next(m.value for m in at.markdown if m.value.startswith("**Contents**"))
    assert "- [5. Storage](#5-storage)" in contents
    assert ("- [12. Can it run? Memory, layout, batch and data supply]"
            "(#12-can-it-run-memory-layout-batch-and-data-supply)") in contents
    headers = [h.value for h in at.header]
    assert headers[:2] == ["1. Compute", "2. Scaling law and the three questions"]
    assert len(re.findall(r"^- \[", contents, re.MULTILINE)) == len(headers)


def test_the_method_page_shows_no_code_paths(app):
    at = app.run()
    at.switch_page("app_pages/method.py").run()
    shown = "\n".join(m.value for m in at.markdown)
    assert "dashboard/" not in shown and ".py`" not in shown
    assert "`weight_archives`" not in shown and "*Weight archives over the run*" in shown  # the Plan page's label


def test_code_phrases_go_and_their_sentences_stay():
    assert readable("implemented once in\n`dashboard/core/` and used") == "implemented once and used"
    assert readable("from it, in\n`dashboard/retro/`, after the filters") == "from it, after the filters"
    assert readable("one layer (`dashboard/query/`, Ibis on DuckDB)") == "one layer (Ibis on DuckDB)"
    assert readable("**Amortisation** (`dashboard/retro/amortise.py`). Amortised") == "**Amortisation**. Amortised"
    assert readable('reads "infeasible". Implemented in `dashboard/core/memory.py`, `layout.py` and '
                    "`feasibility.py`.") == 'reads "infeasible".'
    assert readable("kept for `storage_retention_months` (default 12)") == \
        "kept for *Storage kept after training* (default 12)"
    assert slug("7. Training method: baseline vs Token Superposition Training") == \
        "7-training-method-baseline-vs-token-superposition-training"
