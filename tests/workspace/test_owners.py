"""Issue 53: workspace datasets have owners. Who imported a dataset is recorded with each version; only its owner
or an administrator replaces or deletes it (a second provider's user with the owner's subject is another user);
every import, replacement, deletion and refusal is an audit line; a refusal changes nothing."""

import json
import threading
from pathlib import Path

import pytest

from dashboard.identity import LOCAL, Identity
from dashboard.workspace import datasets, imports, owners
from dashboard.workspace.datasets import DatasetError, Metadata
from dashboard.workspace.imports import delete_dataset, import_to_workspace
from dashboard.workspace.owners import NotOwnerError

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
FOCUS, GCP = SAMPLES / "focus_sample.csv", SAMPLES / "gcp_sample.csv"
FOCUS_ROWS = 242  # the bundled FOCUS sample's usage rows (tests/workspace/test_versions.py)
IDP, OTHER_IDP = "https://sso.example.org", "https://other-idp.example.com"
ALICE = Identity("alice-sub", "alice@example.org", issuer=IDP)
BOB = Identity("bob-sub", "bob@example.org", issuer=IDP)
MALLORY = Identity("alice-sub", "mallory@example.com", issuer=OTHER_IDP)  # Alice's subject at another provider
ADMIN = Identity("boss-sub", "boss@example.org", admin=True, issuer=IDP)


def _state(name: str) -> tuple:
    """What a refused change must leave as it was: the current version folder and its metadata."""
    return datasets.current(name).name, datasets.metadata(name)


def _audit(name: str | None = None) -> list[tuple]:
    return [(line.action, line.dataset, line.actor_issuer, line.actor_subject, line.actor_email, line.owner_email)
            for line in owners.audit(name)]


def test_an_import_records_its_owner_and_importer_with_the_version(workspace):
    info = import_to_workspace(FOCUS, "costs", actor=ALICE)
    stored = json.loads((datasets.current("costs") / datasets.METADATA).read_text(encoding="utf-8"))
    assert {key: stored[key] for key in datasets.PEOPLE_FIELDS} == {
        "owner_issuer": IDP, "owner_subject": "alice-sub", "owner_email": "alice@example.org",
        "imported_by_issuer": IDP, "imported_by_subject": "alice-sub", "imported_by_email": "alice@example.org"}
    assert (owners.owner_of(info), info.rows) == ("alice@example.org", FOCUS_ROWS)
    assert _audit() == [("import", "costs", IDP, "alice-sub", "alice@example.org", "alice@example.org")]


# Who may replace and delete whose dataset: (owner, actor, allowed).
CASES = [
    (ALICE, ALICE, True),
    (ALICE, BOB, False),
    (ALICE, MALLORY, False),  # the same subject from another provider is another user
    (ALICE, ADMIN, True),
    (ALICE, LOCAL, False),  # the command line, and the app without sign-in, never change a signed-in user's
    (LOCAL, LOCAL, True),
    (LOCAL, BOB, False),  # a dataset imported without sign-in: only the local user and administrators
    (LOCAL, ADMIN, True),
]


@pytest.mark.parametrize("owner, actor, allowed", CASES)
def test_who_may_replace_a_dataset(workspace, owner, actor, allowed):
    import_to_workspace(FOCUS, "costs", actor=owner)
    before = _state("costs")
    if not allowed:
        with pytest.raises(NotOwnerError) as error:
            import_to_workspace(GCP, "costs", replace=True, actor=actor)
        assert _state("costs") == before  # nothing changed
        assert not any(path.name != before[0] for path in (workspace / datasets.VERSIONS).iterdir())  # no build left
        assert "nothing was changed" in str(error.value) and "alice-sub" not in str(error.value)
        assert _audit()[-1] == ("refused replace", "costs", actor.issuer, actor.subject, actor.email,
                                owners.owner_of(before[1]))
        return
    info = import_to_workspace(GCP, "costs", replace=True, actor=actor)
    assert (info.source, info.owner_issuer, info.owner_subject, info.owner_email) == (
        "gcp_sample.csv", owner.issuer, owner.subject, owner.email)  # the owner is kept
    assert (info.imported_by_issuer, info.imported_by_subject, info.imported_by_email) == (
        actor.issuer, actor.subject, actor.email)
    (line,) = [line for line in owners.audit("costs") if line.action == "replace"]
    assert (line.actor_subject, line.previous_build, line.build) == (actor.subject, before[0], info.build)


@pytest.mark.parametrize("owner, actor, allowed", CASES)
def test_who_may_delete_a_dataset(workspace, owner, actor, allowed):
    import_to_workspace(FOCUS, "costs", actor=owner)
    before = _state("costs")
    if not allowed:
        with pytest.raises(NotOwnerError, match="You may not delete the dataset costs"):
            delete_dataset("costs", actor=actor)
        assert _state("costs") == before
        assert _audit()[-1][:4] == ("refused delete", "costs", actor.issuer, actor.subject)
        return
    assert delete_dataset("costs", actor=actor) == before[1]
    assert not datasets.exists("costs") and datasets.names() == []
    assert (workspace / datasets.VERSIONS / before[0] / datasets.SUPERSEDED).exists()  # swept after its grace
    assert _audit()[-1][:4] == ("delete", "costs", actor.issuer, actor.subject)


def test_the_refusal_names_the_owner_by_email_only(workspace):
    import_to_workspace(FOCUS, "costs", actor=ALICE)
    with pytest.raises(NotOwnerError) as error:
        import_to_workspace(GCP, "costs", replace=True, actor=MALLORY)
    assert str(error.value) == (
        "You may not replace the dataset costs: it belongs to alice@example.org, and only its owner or an "
        "administrator (PLANNER_ADMINS) may replace it; nothing was changed. Import under another name to keep a "
        "dataset of your own.")


def test_a_dataset_that_changed_hands_during_the_import_is_refused_at_the_switch(workspace, monkeypatch):
    """Alice replaces her dataset; while her file is read, an administrator deletes it and Bob imports the name:
    at the switch the dataset is Bob's, so Alice's replacement is refused, audited, and leaves no build."""
    import_to_workspace(FOCUS, "costs", actor=ALICE)
    read = imports._in_memory

    def meanwhile(*args, **kwargs):
        monkeypatch.setattr(imports, "_in_memory", read)  # the imports below read as usual
        delete_dataset("costs", actor=ADMIN)
        import_to_workspace(FOCUS, "costs", actor=BOB)
        return read(*args, **kwargs)

    monkeypatch.setattr(imports, "_in_memory", meanwhile)
    with pytest.raises(NotOwnerError, match="it belongs to bob@example.org"):
        import_to_workspace(GCP, "costs", replace=True, actor=ALICE)
    info = datasets.metadata("costs")
    assert (info.owner_email, info.source) == ("bob@example.org", "focus_sample.csv")
    assert [line[0] for line in _audit()] == ["import", "delete", "import", "refused replace"]
    linked = {datasets.current("costs").name}
    builds = {path.name for path in (workspace / datasets.VERSIONS).iterdir()
              if not (path / datasets.SUPERSEDED).exists()}
    assert builds == linked  # Alice's build was removed


def test_two_users_replacing_at_once_keep_the_owner_and_audit_each(workspace):
    import_to_workspace(FOCUS, "costs", actor=ALICE)
    barrier = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def replace(actor: Identity) -> None:
        barrier.wait(30)
        try:
            import_to_workspace(GCP, "costs", replace=True, actor=actor)
            outcomes[actor.email] = "replaced"
        except NotOwnerError:
            outcomes[actor.email] = "refused"

    threads = [threading.Thread(target=replace, args=(actor,)) for actor in (ALICE, BOB)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert outcomes == {"alice@example.org": "replaced", "bob@example.org": "refused"}
    assert datasets.metadata("costs").owner_email == "alice@example.org"
    assert sorted(line[0] for line in _audit()) == ["import", "refused replace", "replace"]


def test_a_dataset_written_before_owners_has_none(workspace):
    info = import_to_workspace(FOCUS, "old")
    path = datasets.current("old") / datasets.METADATA
    data = json.loads(path.read_text(encoding="utf-8"))
    for key in datasets.PEOPLE_FIELDS:
        del data[key]
    path.write_text(json.dumps(data), encoding="utf-8")
    old = datasets.metadata("old")
    assert (old.owner_subject, owners.owner_of(old), old.rows) == (None, "(no owner)", info.rows)
    with pytest.raises(NotOwnerError, match="it has no owner"):
        delete_dataset("old", actor=BOB)
    delete_dataset("old", actor=ADMIN)


@pytest.mark.parametrize("field, value", [("owner_subject", ["alice-sub"]), ("owner_email", 7),
                                          ("imported_by_issuer", {"x": 1})])
def test_an_owner_in_a_form_never_written_is_a_damaged_dataset(workspace, field, value):
    info = import_to_workspace(FOCUS, "costs", actor=ALICE)
    data = json.loads(info.to_json()) | {field: value}
    with pytest.raises(DatasetError, match="names its owner in a form this version did not write"):
        Metadata.from_json(json.dumps(data))


def test_a_damaged_dataset_is_replaced_only_by_an_administrator_or_the_local_user(workspace):
    import_to_workspace(FOCUS, "costs", actor=ALICE)
    (datasets.current("costs") / datasets.METADATA).write_text("{not json", encoding="utf-8")
    with pytest.raises(NotOwnerError, match="its metadata cannot be read, so its owner is unknown"):
        import_to_workspace(GCP, "costs", replace=True, actor=BOB)
    info = import_to_workspace(GCP, "costs", replace=True, actor=ADMIN)
    assert (info.owner_email, info.imported_by_email) == ("boss@example.org", "boss@example.org")
    assert [line[0] for line in _audit()] == ["import", "refused replace", "replace"]


def test_the_audit_read_is_bounded_and_skips_what_does_not_parse(workspace, monkeypatch):
    import_to_workspace(FOCUS, "a", actor=ALICE)
    with (workspace / owners.AUDIT).open("a", encoding="utf-8") as trail:
        trail.write("not json\n[1, 2]\n")
    import_to_workspace(FOCUS, "b", actor=BOB)
    assert [line[:2] for line in _audit()] == [("import", "a"), ("import", "b")]
    assert [line[:2] for line in _audit("b")] == [("import", "b")]
    assert [line.dataset for line in owners.audit(limit=1)] == ["b"]
    size = (workspace / owners.AUDIT).stat().st_size
    last = len((workspace / owners.AUDIT).read_text(encoding="utf-8").splitlines()[-1]) + 1
    monkeypatch.setattr(owners, "AUDIT_READ_BYTES", last + 10)  # the tail holds a part of a line, then the last
    assert size > last + 10
    assert [line.dataset for line in owners.audit()] == ["b"]
