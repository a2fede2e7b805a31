"""Owners and the audit trail, on SQLite and on a real PostgreSQL server: two users, an administrator, the local
user, the migration of a store made before owners existed, and two users saving at once."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from dashboard.core.scenario import Scenario
from dashboard.identity import LOCAL, Identity, is_admin, shown_owner
from dashboard.store.errors import NameTakenError, NotAllowedError, ScenarioNotFoundError, StoreError
from dashboard.store.scenario_store import ScenarioStore

HERE = Path(__file__).resolve().parent
ISSUER = "https://sso.example.org"
A = Identity("subject-a", "a@example.org", issuer=ISSUER)
B = Identity("subject-b", "b@example.org", issuer=ISSUER)
ADMIN = Identity("subject-admin", "boss@example.org", admin=True, issuer=ISSUER)


def sqlalchemy_url(url: str) -> str:
    return url.replace("postgresql://", "postgresql+psycopg://", 1)


def snapshot(store: ScenarioStore) -> list[tuple]:
    """Everything a refused change must leave as it was: names, scenarios, owners, times, and the audit trail."""
    return [(entry.name, entry.scenario, entry.owner_subject, entry.owner_email, entry.updated_at)
            for entry in store.entries()] + [len(store.audit_trail())]


# -- who may change what -------------------------------------------------------------------------------


def test_a_saved_scenario_records_its_owner_and_times(store):
    before = datetime.now(UTC) - timedelta(seconds=1)
    store.save("Plan A", Scenario(mfu=0.3), actor=A)
    (entry,) = store.entries()
    assert (entry.owner_subject, entry.owner_email, entry.owner) == ("subject-a", "a@example.org", "a@example.org")
    assert before <= entry.created_at <= entry.updated_at <= datetime.now(UTC) + timedelta(seconds=1)


@pytest.mark.parametrize("change, doing", [
    (lambda store: store.rename("Plan A", "Mine now", actor=B), "rename"),
    (lambda store: store.save("Plan A", Scenario(mfu=0.9), overwrite=True, actor=B), "overwrite"),
    (lambda store: store.import_scenarios([Scenario(name="Plan A", mfu=0.9)], overwrite=True, actor=B), "overwrite"),
    (lambda store: store.delete("Plan A", actor=B), "delete"),
])
def test_another_user_cannot_change_a_scenario_and_nothing_changes(store, change, doing):
    store.save("Plan A", Scenario(mfu=0.3), actor=A)
    before = snapshot(store)
    with pytest.raises(NotAllowedError) as error:
        change(store)
    assert str(error.value) == (
        f"you may not {doing} 'Plan A': it belongs to a@example.org, and only its owner or an administrator "
        "(PLANNER_ADMINS) may rename, overwrite or delete it; nothing was changed. Duplicate it to change a copy "
        "of your own"
    )
    assert isinstance(error.value, StoreError)
    assert "subject-a" not in str(error.value)  # the owner's e-mail only, never their subject
    assert snapshot(store) == before
    assert store.load("Plan A") == Scenario(name="Plan A", mfu=0.3)


def test_a_refused_import_saves_none_of_its_scenarios(store):
    store.save("Plan A", Scenario(mfu=0.3), actor=A)
    with pytest.raises(NotAllowedError):
        store.import_scenarios([Scenario(name="B's own"), Scenario(name="Plan A", mfu=0.9)], overwrite=True, actor=B)
    assert store.names() == ["Plan A"]


def test_another_user_can_open_duplicate_and_compare_it(store):
    store.save("Plan A", Scenario(mfu=0.3), actor=A)
    assert store.load("Plan A").mfu == 0.3
    store.duplicate("Plan A", "B's copy", actor=B)
    store.save("B's copy", Scenario(mfu=0.4), overwrite=True, actor=B)  # the copy is B's own
    entries = {entry.name: entry for entry in store.entries()}
    assert (entries["B's copy"].owner_email, entries["B's copy"].scenario.mfu) == ("b@example.org", 0.4)
    assert (entries["Plan A"].owner_email, entries["Plan A"].scenario.mfu) == ("a@example.org", 0.3)


def test_the_owner_can_rename_overwrite_and_delete(store):
    store.save("Plan A", Scenario(mfu=0.3), actor=A)
    store.rename("Plan A", "Plan A2", actor=A)
    store.save("Plan A2", Scenario(mfu=0.5), overwrite=True, actor=A)
    assert store.load("Plan A2") == Scenario(name="Plan A2", mfu=0.5)
    store.delete("Plan A2", actor=A)
    assert store.names() == []


def test_an_overwrite_keeps_the_owner(store):
    store.save("Plan A", Scenario(mfu=0.3), actor=A)
    store.save("Plan A", Scenario(mfu=0.4), overwrite=True, actor=ADMIN)
    assert [(entry.owner_email, entry.scenario.mfu) for entry in store.entries()] == [("a@example.org", 0.4)]


def test_an_administrator_can_change_anyones_scenario(store):
    store.save("Plan A", Scenario(mfu=0.3), actor=A)
    store.rename("Plan A", "Reviewed", actor=ADMIN)
    store.save("Reviewed", Scenario(mfu=0.6), overwrite=True, actor=ADMIN)
    assert store.load("Reviewed").mfu == 0.6
    store.delete("Reviewed", actor=ADMIN)
    assert store.names() == []


def test_a_taken_name_is_still_a_clash_before_it_is_a_refusal(store):
    store.save("Plan A", Scenario(), actor=A)
    with pytest.raises(NameTakenError):
        store.save("Plan A", Scenario(), actor=B)
    with pytest.raises(ScenarioNotFoundError):
        store.delete("Nothing", actor=B)


def test_the_local_user_changes_ownerless_scenarios_but_not_owned_ones(store):
    store.save("Local", Scenario(mfu=0.2))  # no sign-in: the anonymous local user, no owner recorded
    assert store.entries()[0].owner == "(no owner)"
    store.rename("Local", "Local 2", actor=LOCAL)
    store.save("Local 2", Scenario(mfu=0.3), overwrite=True)
    store.save("Plan A", Scenario(), actor=A)
    with pytest.raises(NotAllowedError, match="it belongs to a@example.org"):
        store.delete("Plan A", actor=LOCAL)
    store.delete("Local 2")
    assert store.names() == ["Plan A"]


def test_a_signed_in_user_cannot_change_an_ownerless_scenario_but_an_administrator_adopts_it(store):
    store.save("Old", Scenario(mfu=0.2))
    with pytest.raises(NotAllowedError) as error:
        store.delete("Old", actor=B)
    assert "it has no owner, and only an administrator (PLANNER_ADMINS) may change or adopt it" in str(error.value)
    with pytest.raises(NotAllowedError, match="only an administrator"):
        store.adopt("Old", actor=B)
    store.adopt("Old", actor=ADMIN)
    assert store.entries()[0].owner_email == "boss@example.org"
    with pytest.raises(NotAllowedError, match="it belongs to boss@example.org"):
        store.rename("Old", "New", actor=B)
    assert [entry.action for entry in store.history("Old")] == ["save", "adopt"]


# -- the audit trail -------------------------------------------------------------------------------------


def test_every_change_writes_its_audit_row_with_the_previous_value(store):
    store.save("Plan", Scenario(mfu=0.3), actor=A)
    store.save("Plan", Scenario(mfu=0.4), overwrite=True, actor=A)
    store.rename("Plan", "Plan v2", actor=A)
    store.duplicate("Plan v2", "Copy", actor=B)
    store.save("Plan v2", Scenario(mfu=0.5), overwrite=True, actor=ADMIN)
    store.delete("Plan v2", actor=ADMIN)
    trail = store.audit_trail()
    assert [(entry.action, entry.name, entry.actor_email, entry.previous_name) for entry in trail] == [
        ("save", "Plan", "a@example.org", None),
        ("overwrite", "Plan", "a@example.org", None),
        ("rename", "Plan v2", "a@example.org", "Plan"),
        ("duplicate", "Copy", "b@example.org", "Plan v2"),
        ("overwrite", "Plan v2", "boss@example.org", None),
        ("delete", "Plan v2", "boss@example.org", None),
    ]
    assert [entry.actor_subject for entry in trail] == ["subject-a"] * 3 + ["subject-b"] + ["subject-admin"] * 2
    assert json.loads(trail[1].previous_json)["mfu"] == 0.3  # the overwrite kept what it replaced
    assert json.loads(trail[4].previous_json)["mfu"] == 0.4
    assert json.loads(trail[5].previous_json)["mfu"] == 0.5  # the delete kept what it removed
    assert all(entry.at.utcoffset() == timedelta(0) for entry in trail)
    assert [entry.at for entry in trail] == sorted(entry.at for entry in trail)


def test_a_refused_change_writes_no_audit_row(store):
    store.save("Plan", Scenario(), actor=A)
    for change in (lambda: store.delete("Plan", actor=B), lambda: store.rename("Plan", "X", actor=B)):
        with pytest.raises(NotAllowedError):
            change()
    assert [entry.action for entry in store.audit_trail()] == ["save"]


def test_history_follows_a_scenario_through_renames_and_starts_afresh_after_a_delete(store):
    store.save("First", Scenario(), actor=A)
    store.rename("First", "Second", actor=A)
    store.save("Other", Scenario(), actor=B)
    assert [(entry.action, entry.name, entry.actor) for entry in store.history("Second")] == [
        ("save", "First", "a@example.org"), ("rename", "Second", "a@example.org")]
    store.delete("Second", actor=A)
    store.delete("Other", actor=B)  # on SQLite the next row may take a deleted row's id again
    store.save("Second", Scenario(), actor=B)
    assert [(entry.action, entry.actor) for entry in store.history("Second")] == [("save", "b@example.org")]
    with pytest.raises(ScenarioNotFoundError):
        store.history("First")


def test_the_local_user_is_audited_without_identity(store):
    store.save("Local", Scenario())
    (entry,) = store.history("Local")
    assert (entry.actor_subject, entry.actor_email, entry.actor) == (None, None, "(local user)")


# -- a store made before owners existed ------------------------------------------------------------------

OLD_SCHEMA = """CREATE TABLE scenarios (
    id {id_type} PRIMARY KEY, name TEXT NOT NULL, scenario_json TEXT NOT NULL,
    created_at TIMESTAMP{zone} NOT NULL, updated_at TIMESTAMP{zone} NOT NULL,
    CONSTRAINT scenarios_name_key UNIQUE (name))"""


def make_old_store(url: str) -> None:
    engine = create_engine(sqlalchemy_url(url))
    postgres = engine.dialect.name == "postgresql"
    with engine.begin() as connection:
        connection.execute(text("DROP TABLE IF EXISTS scenario_audit"))
        connection.execute(text("DROP TABLE IF EXISTS scenarios"))
        connection.execute(text(OLD_SCHEMA.format(id_type="SERIAL" if postgres else "INTEGER",
                                                  zone=" WITH TIME ZONE" if postgres else "")))
        now = datetime.now(UTC)
        connection.execute(
            text("INSERT INTO scenarios (name, scenario_json, created_at, updated_at) VALUES (:n, :j, :c, :u)"),
            [{"n": name, "j": json.dumps(Scenario(name=name, mfu=0.25).to_json_dict()), "c": now, "u": now}
             for name in ("Legacy one", "Legacy two")],
        )
    engine.dispose()


def test_opening_an_old_store_adds_owners_and_the_audit_table(store_url):
    make_old_store(store_url)
    with ScenarioStore(store_url) as store:
        assert [(entry.name, entry.owner_subject, entry.scenario.mfu) for entry in store.entries()] == [
            ("Legacy one", None, 0.25), ("Legacy two", None, 0.25)]
        with pytest.raises(NotAllowedError, match="it has no owner"):
            store.delete("Legacy one", actor=B)
        store.adopt("Legacy one", actor=ADMIN)
        store.rename("Legacy two", "Legacy 2")  # sign-in off: the local user changes ownerless rows as before
        store.save("New", Scenario(), actor=A)
    with ScenarioStore(store_url) as reopened:  # a second open finds the columns there and changes nothing
        owners = {entry.name: entry.owner for entry in reopened.entries()}
        assert owners == {"Legacy one": "boss@example.org", "Legacy 2": "(no owner)", "New": "a@example.org"}
        assert [entry.action for entry in reopened.audit_trail()] == ["adopt", "rename", "save"]


def test_an_old_store_opened_read_only_still_lists_its_scenarios(tmp_path):
    path = tmp_path / "scenarios.db"
    make_old_store(f"sqlite:///{path}")
    with ScenarioStore(f"sqlite:///file:{path}?mode=ro&uri=true") as store:
        assert [(entry.name, entry.owner) for entry in store.entries()] == [
            ("Legacy one", "(no owner)"), ("Legacy two", "(no owner)")]
        assert store.load("Legacy one").mfu == 0.25
        assert store.history("Legacy one") == []
        with pytest.raises(StoreError, match="read-only"):
            store.save("New", Scenario())


def test_programs_opening_an_old_store_at_once_migrate_it_once(store_url):
    make_old_store(store_url)
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def open_and_save(number: int) -> None:
        barrier.wait(30)
        try:
            with ScenarioStore(store_url) as store:
                store.save(f"by {number}", Scenario(), actor=A)
        except BaseException as error:  # collected for the assertion below
            errors.append(error)

    threads = [threading.Thread(target=open_and_save, args=(number,)) for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    with ScenarioStore(store_url) as store:
        assert len(store.names()) == 6


# -- two users at once ------------------------------------------------------------------------------------


def test_two_users_saving_at_once_lose_nothing(store_url):
    stores = [ScenarioStore(store_url), ScenarioStore(store_url)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def run(store, actor, other):
        barrier.wait(30)
        try:
            for number in range(15):
                store.save(f"{actor.subject} {number}", Scenario(gpu_count=number + 1), actor=actor)
                store.save(f"{actor.subject} {number}", Scenario(gpu_count=number + 100), overwrite=True, actor=actor)
                with contextlib.suppress(NotAllowedError):  # whoever saved "shared N" first owns it
                    store.save(f"shared {number}", Scenario(gpu_count=number + 1), overwrite=True, actor=actor)
                try:
                    store.delete(f"{other.subject} {number}", actor=actor)
                    errors.append(AssertionError(f"{actor.subject} deleted {other.subject} {number}"))
                except (NotAllowedError, ScenarioNotFoundError):
                    pass
        except BaseException as error:  # collected for the assertion below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(stores[0], A, B)),
               threading.Thread(target=run, args=(stores[1], B, A))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    entries = {entry.name: entry for entry in stores[0].entries()}
    for actor in (A, B):
        for number in range(15):
            entry = entries[f"{actor.subject} {number}"]
            assert (entry.owner_subject, entry.scenario.gpu_count) == (actor.subject, number + 100)
    assert {entries[f"shared {number}"].owner_subject for number in range(15)} <= {A.subject, B.subject}
    trail = stores[0].audit_trail()
    assert sum(entry.action == "save" for entry in trail) == 45  # 30 own names and the 15 shared ones
    assert sum(entry.action == "overwrite" for entry in trail) >= 30
    assert not any(entry.action == "delete" for entry in trail)
    for store in stores:
        store.close()


def test_two_users_in_two_processes_lose_nothing(store_url, monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))  # spawned children import store_workers by name
    import store_workers

    context = multiprocessing.get_context("spawn")
    start, results = context.Event(), context.Queue()
    processes = [context.Process(target=store_workers.save_as, args=(store_url, subject, 12, start, results))
                 for subject in ("a", "b")]
    for process in processes:
        process.start()
    start.set()
    reports = {subject: (outcome, refused) for subject, outcome, refused in
               (results.get(timeout=120) for _ in processes)}
    for process in processes:
        process.join(60)
    assert {subject: outcome for subject, (outcome, _) in reports.items()} == {"a": "ok", "b": "ok"}
    assert sum(refused for _, refused in reports.values()) >= 1  # at least one delete found the other's name
    with ScenarioStore(store_url) as store:
        entries = {entry.name: entry for entry in store.entries()}
        assert set(entries) == {f"{subject} {number}" for subject in "ab" for number in range(12)}
        for name, entry in entries.items():
            assert (entry.owner_subject, entry.scenario.gpu_count) == (name[0], int(name.split()[1]) + 100)
        assert len(store.audit_trail()) == 48


# -- identities ------------------------------------------------------------------------------------------


ADMINS = ["https://sso.example.org#subject-x", "Boss@Example.org"]


@pytest.mark.parametrize("issuer, subject, email, verified, expected", [
    ("https://sso.example.org", "subject-x", None, False, True),  # listed as ISSUER#SUBJECT
    ("https://other.example.com", "subject-x", None, False, False),  # the same subject from another provider
    ("https://sso.example.org", "Subject-X", None, False, False),  # subjects match exactly
    ("https://sso.example.org", "other", "boss@example.ORG", True, True),  # a verified e-mail, ignoring case
    ("https://sso.example.org", "other", "boss@example.org", False, False),  # not verified: not an administrator
    ("https://other.example.com", "other", "boss@example.org", True, True),  # a verified e-mail, any provider
    (None, None, None, False, False),  # the local user
    ("https://sso.example.org", "boss@example.org", None, False, False),  # a subject is never read as an e-mail
])
def test_administrators_are_issuer_and_subject_or_a_verified_email(issuer, subject, email, verified, expected):
    assert is_admin(issuer, subject, email, ADMINS, email_verified=verified) is expected


def test_a_bare_subject_in_the_list_names_nobody():
    assert not is_admin("https://sso.example.org", "subject-x", None, ["subject-x"], email_verified=True)


def test_owners_are_shown_by_email_only():
    assert shown_owner("sub", "a@example.org") == "a@example.org"
    assert shown_owner("sub", None) == "(a user without an e-mail)"
    assert shown_owner(None, None) == "(no owner)"
    with pytest.raises(ValueError):
        Identity("", issuer=ISSUER)
    with pytest.raises(ValueError, match="both its issuer and its subject"):
        Identity("subject-a", "a@example.org")  # a subject means nothing without its issuer
    with pytest.raises(ValueError, match="both its issuer and its subject"):
        Identity(issuer=ISSUER)


# -- two providers: the same subject is two users ---------------------------------------------------------

OTHER = "https://other-idp.example.com"
MALLORY = Identity("subject-a", "mallory@example.com", issuer=OTHER)  # A's subject, from another provider


@pytest.mark.parametrize("change, doing", [
    (lambda store: store.rename("Plan A", "Mine now", actor=MALLORY), "rename"),
    (lambda store: store.save("Plan A", Scenario(mfu=0.9), overwrite=True, actor=MALLORY), "overwrite"),
    (lambda store: store.delete("Plan A", actor=MALLORY), "delete"),
])
def test_a_second_providers_user_with_the_same_subject_is_another_user(store, change, doing):
    store.save("Plan A", Scenario(mfu=0.3), actor=A)
    before = snapshot(store)
    with pytest.raises(NotAllowedError, match=f"you may not {doing} 'Plan A': it belongs to a@example.org"):
        change(store)
    assert snapshot(store) == before
    (entry,) = store.entries()
    assert (entry.owner_issuer, entry.owner_subject, entry.owner_email) == (ISSUER, "subject-a", "a@example.org")


def test_each_provider_owns_its_own_and_the_audit_records_both_issuers(store):
    store.save("Plan A", Scenario(mfu=0.3), actor=A)
    store.save("Plan M", Scenario(mfu=0.4), actor=MALLORY)
    store.rename("Plan M", "Plan M2", actor=MALLORY)
    with pytest.raises(NotAllowedError, match="it belongs to mallory@example.com"):
        store.delete("Plan M2", actor=A)
    assert [(entry.action, entry.actor_issuer, entry.actor_subject, entry.actor_email)
            for entry in store.audit_trail()] == [
        ("save", ISSUER, "subject-a", "a@example.org"),
        ("save", OTHER, "subject-a", "mallory@example.com"),
        ("rename", OTHER, "subject-a", "mallory@example.com"),
    ]


def test_an_administrator_adopting_from_another_provider_becomes_the_owner(store):
    other_admin = Identity("subject-admin", "boss@other.example.com", admin=True, issuer=OTHER)
    store.save("Plan A", Scenario(), actor=A)
    store.adopt("Plan A", actor=other_admin)
    (entry,) = store.entries()
    assert (entry.owner_issuer, entry.owner_subject) == (OTHER, "subject-admin")
    with pytest.raises(NotAllowedError):  # the same subject at the first provider is not that administrator
        store.delete("Plan A", actor=Identity("subject-admin", "x@example.org", issuer=ISSUER))


# -- a store made before issuers were recorded -----------------------------------------------------------

OWNERS_SCHEMA = """CREATE TABLE scenarios (
    id {id_type} PRIMARY KEY, name TEXT NOT NULL, scenario_json TEXT NOT NULL,
    created_at TIMESTAMP{zone} NOT NULL, updated_at TIMESTAMP{zone} NOT NULL,
    owner_subject TEXT, owner_email TEXT,
    CONSTRAINT scenarios_name_key UNIQUE (name))"""
OWNERS_AUDIT_SCHEMA = """CREATE TABLE scenario_audit (
    id {id_type} PRIMARY KEY, scenario_id INTEGER NOT NULL, at TIMESTAMP{zone} NOT NULL, action TEXT NOT NULL,
    name TEXT NOT NULL, previous_name TEXT, previous_json TEXT, previous_owner_email TEXT, actor_subject TEXT,
    actor_email TEXT)"""


def make_store_without_issuers(url: str) -> None:
    """A store as the subject-only version wrote it: Alice's plan, one ownerless plan, and their audit rows."""
    engine = create_engine(sqlalchemy_url(url))
    postgres = engine.dialect.name == "postgresql"
    kinds = {"id_type": "SERIAL" if postgres else "INTEGER", "zone": " WITH TIME ZONE" if postgres else ""}
    with engine.begin() as connection:
        for table in ("scenario_audit", "scenarios", "plan_outcomes"):
            connection.execute(text(f"DROP TABLE IF EXISTS {table}"))
        connection.execute(text(OWNERS_SCHEMA.format(**kinds)))
        connection.execute(text(OWNERS_AUDIT_SCHEMA.format(**kinds)))
        now = datetime.now(UTC)
        for number, (name, subject, email) in enumerate(
                [("Alice plan", "subject-a", "a@example.org"), ("Nobody's", None, None)], start=1):
            connection.execute(
                text("INSERT INTO scenarios (id, name, scenario_json, created_at, updated_at, owner_subject, "
                     "owner_email) VALUES (:i, :n, :j, :c, :u, :s, :e)"),
                {"i": number, "n": name, "j": json.dumps(Scenario(name=name).to_json_dict()), "c": now, "u": now,
                 "s": subject, "e": email})
            connection.execute(
                text("INSERT INTO scenario_audit (scenario_id, at, action, name, actor_subject, actor_email) "
                     "VALUES (:i, :a, 'save', :n, :s, :e)"),
                {"i": number, "a": now, "n": name, "s": subject, "e": email})
    engine.dispose()


def test_owners_without_an_issuer_are_changed_only_by_an_administrator(store_url):
    make_store_without_issuers(store_url)
    with ScenarioStore(store_url) as store:
        entries = {entry.name: entry for entry in store.entries()}
        assert (entries["Alice plan"].owner_issuer, entries["Alice plan"].owner) == (None, "a@example.org")
        # Neither the provider of the subject nor another one can prove it was theirs.
        for someone in (A, MALLORY, LOCAL):
            with pytest.raises(NotAllowedError) as error:
                store.delete("Alice plan", actor=someone)
            assert "it was saved by a@example.org before owners were recorded with their sign-in provider" in str(
                error.value)
        store.rename("Nobody's", "Still nobody's")  # the local user keeps changing ownerless rows
        store.adopt("Alice plan", actor=ADMIN)
        assert [entry.action for entry in store.history("Alice plan")] == ["save", "adopt"]
        assert store.history("Alice plan")[0].actor_issuer is None
        assert [(e.owner_issuer, e.owner_subject) for e in store.entries() if e.name == "Alice plan"] == [
            (ISSUER, "subject-admin")]


def test_the_operators_legacy_issuer_gives_old_owners_their_issuer(store_url):
    make_store_without_issuers(store_url)
    with ScenarioStore(store_url, legacy_owner_issuer=ISSUER) as store:
        with pytest.raises(NotAllowedError, match="it belongs to a@example.org"):
            store.delete("Alice plan", actor=MALLORY)  # the same subject from another provider still may not
        store.save("Alice plan", Scenario(mfu=0.45), overwrite=True, actor=A)  # Alice, at the stated issuer, may
        entries = {entry.name: entry for entry in store.entries()}
        assert (entries["Alice plan"].owner_issuer, entries["Nobody's"].owner_issuer) == (ISSUER, None)
        assert [(e.action, e.actor_issuer) for e in store.history("Alice plan")] == [
            ("save", ISSUER), ("overwrite", ISSUER)]
        assert [(e.name, e.actor_issuer) for e in store.audit_trail()][1] == ("Nobody's", None)



def test_a_store_without_issuers_opened_read_only_still_reads_its_owners_and_history(tmp_path):
    path = tmp_path / "scenarios.db"
    make_store_without_issuers(f"sqlite:///{path}")
    with ScenarioStore(f"sqlite:///file:{path}?mode=ro&uri=true", legacy_owner_issuer=ISSUER) as store:
        assert [(entry.name, entry.owner, entry.owner_issuer) for entry in store.entries()] == [
            ("Alice plan", "a@example.org", None), ("Nobody's", "(no owner)", None)]
        assert [(entry.action, entry.actor_issuer) for entry in store.history("Alice plan")] == [("save", None)]
        assert len(store.audit_trail()) == 2
