"""AppTest: the Import page refuses decimal commas on the FOCUS sample (whose numbers use decimal points) with the
import layer's one-line message, as the CLI does, instead of showing its $951k as $95M."""

from pathlib import Path

from shown_text import shown

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"


def test_decimal_commas_on_the_focus_sample_are_refused(app):
    at = app.run().switch_page("app_pages/imports.py").run()
    assert at.selectbox(key="sample").value == "focus_sample.csv"
    assert next(m for m in at.metric if m.label == "Cost").value == "$951k"  # read as written: $950,733.64
    at.checkbox(key="import_decimal_comma").check().run()
    assert not at.exception
    assert [shown(e.value) for e in at.error] == [
        "Decimal commas were chosen for focus_sample.csv, but its column 'BilledCost' holds numbers with decimal "
        "points (e.g. '822.53', which they would read as 82,253). Read it without decimal commas (untick "
        '"Decimal commas", or drop --decimal-comma).'
    ]
    assert not at.metric  # no figures at all, so no $95M cost
    first_cost = (SAMPLES / "focus_sample.csv").read_text().splitlines()[1].split(",")
    assert "822.53" in first_cost  # the example is the file's first BilledCost
