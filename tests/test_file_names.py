"""Download file names from scenario names: safe characters only, bounded, never empty or reserved."""

import pytest

from dashboard.file_names import download_name


@pytest.mark.parametrize(("name", "expected"), [
    ("Default: 7B dense, 2T tokens on 512 H100", "Default-7B-dense-2T-tokens-on-512-H100.json"),
    ("Llama 3.1 405B", "Llama-3.1-405B.json"),
    ("Modèle été", "Modele-ete.json"),
    ("../../etc/passwd", "etc-passwd.json"),
    ("a/b\\c<d>e|f?g*h\"i", "a-b-c-d-e-f-g-h-i.json"),
    ("[Click](https://evil.example)", "Click-https-evil.example.json"),
    ("...", "scenario.json"),
    ("日本語", "scenario.json"),
    ("CON", "scenario.json"),
    ("x" * 200, "x" * 80 + ".json"),
    # A long derived name is cut at a word, and carries no digest (issue 51: "…-3-more-863ae3.json").
    ("7B dense, 2T tokens on 512 H100, MFU 35 %, reserved 3 USD, on-demand 7 USD, spot 2.10 USD and 5 more",
     "7B-dense-2T-tokens-on-512-H100-MFU-35-reserved-3-USD-on-demand-7-USD-spot-2.10.json"),
    ("x" * 60 + " " + "y" * 60, "x" * 60 + ".json"),
    ("a " + "x" * 100, "a-" + "x" * 78 + ".json"),  # no word ends in the second half: cut at 80
])
def test_download_name(name, expected):
    assert download_name(name, ".json") == expected
