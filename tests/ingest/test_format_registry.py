"""The format descriptions: found by module, self-consistent, and each recognised from its own fingerprint."""

import pytest

from dashboard.ingest.detect import detect_format
from dashboard.ingest.formats import FORMATS
from dashboard.ingest.schema import FORMATS as FORMAT_MODULES

DETECTABLE = [fmt for fmt in FORMATS.values() if fmt.fingerprint is not None]


def test_every_module_is_a_registered_format():
    assert set(FORMATS) == set(FORMAT_MODULES) == {"focus", "aws_cur", "gcp", "azure", "slurm", "wandb", "generic"}


@pytest.mark.parametrize("fmt", FORMATS.values(), ids=list(FORMATS))
def test_description_names_only_its_own_column_keys(fmt):
    keys = set(fmt.columns)
    named = set(fmt.categorical) | {e.key for e in fmt.exclusions}
    if fmt.fingerprint is not None:
        named |= {key for group in fmt.fingerprint.required for key in group} | set(fmt.fingerprint.markers)
    assert named <= keys
    assert all(fmt.columns[key] for key in keys)


@pytest.mark.parametrize("fmt", DETECTABLE, ids=[f.id for f in DETECTABLE])
def test_a_header_of_the_required_columns_is_detected_as_its_format(fmt):
    header = [fmt.columns[group[0]][0] for group in fmt.fingerprint.required]
    assert detect_format(header) == fmt.id
    assert detect_format([name.upper() for name in header]) == fmt.id  # names are matched case-insensitively
