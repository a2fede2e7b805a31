"""The pandas oracle the query tests compare with (tests/support) is frozen (issue 49): each Retrospective rule is
written once, in ``dashboard/retro/``. A rule change is made there and shown against hand-computed cases (the tests
of ``tests/retro/``), never by editing the oracle to agree (a figure whose rule changed leaves the comparison, and
its oracle function may be deleted); this pins the oracle's content."""

import hashlib
from pathlib import Path

import pytest

SUPPORT = Path(__file__).resolve().parents[1] / "support"
FROZEN = "is frozen (issue 49; docs/architecture.md, Tests)"
# SHA-256 of each oracle file's text (line endings as LF).
DIGESTS = {
    "pandas_days.py": "369667ea3d5810c87e5c9332238d3eef13da19f861f73be481d354d1c0625427",
    "retro_pandas_reference.py": "7434237d5ccef5480082edb23e87bceca3df1bdc8723c49a58d9001fe794cdf9",
    "join_pandas_reference.py": "b8506be587bd5bcc422189b0d13c7256df5406047ceb86e68f342fc88b12a10b",
    "amortise_pandas_reference.py": "eaab96c225361978596cfb2a5ce9cffac538f9309aa294fafa80e04a825e79f9",
}


@pytest.mark.parametrize(("name", "digest"), list(DIGESTS.items()))
def test_the_pandas_oracle_is_not_edited(name, digest):
    text = (SUPPORT / name).read_text(encoding="utf-8").replace("\r\n", "\n")
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == digest, (
        f"tests/support/{name} {FROZEN}: the oracle the query tests compare with is not edited when a rule changes. "
        "Change the rule in dashboard/retro/ and show it against hand-computed cases in tests/retro/; the figure's "
        "comparison with the oracle then goes (tests/query/), and deleting its function here, with the digest "
        "above, is the one edit allowed.")


def test_every_oracle_file_is_pinned():
    oracles = {path.name for path in SUPPORT.glob("*pandas*.py")}
    assert oracles == set(DIGESTS), f"a pandas oracle in tests/support that is not pinned here {FROZEN}"
