"""The plan_outcomes table, on SQLite and on a real PostgreSQL server: a kept outcome reads back as written, with
who kept it and when; the same plan and period again replaces it; reads are bounded and newest first; only a plan
saved in the store is kept; a store made before the table existed gets it (and a read-only one still opens)."""

from __future__ import annotations

import json
import threading
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import create_engine, inspect, text

from dashboard.core.plan_accuracy import PlanOutcome, accuracy, accuracy_sentence
from dashboard.core.scenario import Scenario
from dashboard.identity import LOCAL, Identity
from dashboard.store import plan_outcomes
from dashboard.store.errors import InvalidNameError, NotAllowedError, ScenarioNotFoundError
from dashboard.store.scenario_store import ScenarioStore

ISSUER = "https://sso.example.org"
A = Identity("subject-a", "a@example.org", issuer=ISSUER)
B = Identity("subject-b", "b@example.org", issuer=ISSUER)
Q2 = (date(2025, 4, 1), date(2025, 6, 30))
Q3 = (date(2025, 7, 1), date(2025, 9, 30))


def _engine(url: str):
    return create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))


@pytest.fixture
def outcomes_store(store_url):
    """The store fixture's location, without a plan_outcomes table left by an earlier test (PostgreSQL keeps it)."""
    engine = _engine(store_url)
    with engine.begin() as connection:
        connection.execute(text("DROP TABLE IF EXISTS plan_outcomes"))
    engine.dispose()
    with ScenarioStore(store_url) as opened:
        opened.save("Plan A", Scenario(name="Plan A"), actor=A)
        opened.save("Plan B", Scenario(name="Plan B"), actor=B)
        yield opened


def outcome(name: str = "Plan A", period: tuple[date, date] = Q2, *, plan_h: float = 100.0,
            actual_h: float = 110.0, plan_usd: float = 1_000.0, actual_usd: float = 1_200.0,
            currency: str | None = "USD", **extra) -> PlanOutcome:
    gap_h, gap_usd = actual_h - plan_h, actual_usd - plan_usd
    fields = dict(scenario_name=name, period_start=period[0], period_end=period[1], currency=currency,
                  plan_gpu_hours=plan_h, plan_usd=plan_usd, actual_gpu_hours=actual_h, actual_usd=actual_usd,
                  price_gpu_hours=0.0, quantity_gpu_hours=gap_h / 2, efficiency_gpu_hours=gap_h / 2,
                  price_usd=gap_usd / 2, quantity_usd=gap_usd / 4, efficiency_usd=gap_usd / 4)
    return PlanOutcome(**(fields | extra))


def test_a_kept_outcome_reads_back_with_who_and_when(outcomes_store):
    before = datetime.now(UTC)
    kept = outcome(unknown_parts=("efficiency", "price"), cost_known=True)
    outcomes_store.record_outcome(kept, actor=A)
    (found,) = outcomes_store.outcomes()
    assert found.outcome == kept
    assert (found.recorded_by_issuer, found.recorded_by_subject, found.recorded_by_email, found.recorded_by) == (
        ISSUER, "subject-a", "a@example.org", "a@example.org")
    assert before - timedelta(seconds=1) <= found.recorded_at <= datetime.now(UTC) + timedelta(seconds=1)
    assert found.recorded_at.tzinfo is not None
    assert found.scenario_id is not None


def test_money_unknown_in_another_currency_reads_back_as_none(outcomes_store):
    kept = outcome(currency="EUR", price_usd=None, quantity_usd=None, efficiency_usd=None, actual_usd=950.0)
    outcomes_store.record_outcome(kept, actor=LOCAL)
    (found,) = outcomes_store.outcomes()
    assert found.outcome == kept and found.outcome.price_usd is None
    assert (found.recorded_by_subject, found.recorded_by) == (None, "(local user)")


def test_the_same_plan_and_period_again_replaces_the_record(outcomes_store):
    outcomes_store.record_outcome(outcome(actual_h=110.0), actor=A)
    outcomes_store.record_outcome(outcome(period=Q3, actual_h=90.0), actor=A)  # another period: a second row
    outcomes_store.record_outcome(outcome(actual_h=130.0), actor=B)  # the same period: replaces the first
    found = outcomes_store.outcomes()
    assert [(r.outcome.period_end, r.outcome.actual_gpu_hours, r.recorded_by) for r in found] == [
        (Q3[1], 90.0, "a@example.org"), (Q2[1], 130.0, "b@example.org")]
    engine = _engine(outcomes_store.url.render_as_string(hide_password=False))
    with engine.connect() as connection:
        assert connection.execute(text("SELECT COUNT(*) FROM plan_outcomes")).scalar_one() == 2
    engine.dispose()


def test_reads_are_bounded_and_newest_period_first(outcomes_store):
    for month in range(1, 13):
        period = (date(2024, month, 1), date(2024, month, 28))
        outcomes_store.record_outcome(outcome(period=period, actual_h=100.0 + month), actor=A)
    assert [r.outcome.period_end.month for r in outcomes_store.outcomes(3)] == [12, 11, 10]
    assert len(outcomes_store.outcomes()) == plan_outcomes.DEFAULT_OUTCOMES
    assert len(outcomes_store.outcomes(plan_outcomes.MAX_OUTCOMES)) == 12
    for bad in (0, -1, plan_outcomes.MAX_OUTCOMES + 1, 2.5, True):
        with pytest.raises(ValueError, match="1–100 plan outcomes"):
            outcomes_store.outcomes(bad)


def test_the_last_outcomes_feed_the_sentence(outcomes_store):
    outcomes_store.record_outcome(outcome("Plan A", Q2, plan_h=100.0, actual_h=110.0), actor=A)
    outcomes_store.record_outcome(outcome("Plan B", Q3, plan_h=110.0, actual_h=99.0, plan_usd=1_000.0,
                                          actual_usd=1_050.0), actor=B)
    acc = accuracy(r.outcome for r in outcomes_store.outcomes())
    # GPU-hours 10 % and 10 %; cost 20 % and 5 %: median 12.5 %
    assert accuracy_sentence(acc) == ("Our last 2 plans were off by a median of 10 % on GPU-hours (worst 10 %) and "
                                      "a median of 12.5 % on cost (worst 20 %).")


def test_only_a_plan_saved_in_the_store_is_kept(outcomes_store):
    with pytest.raises(ScenarioNotFoundError, match="only a plan saved in the store can be kept"):
        outcomes_store.record_outcome(outcome("Not saved"), actor=A)
    with pytest.raises(InvalidNameError):
        outcomes_store.record_outcome(outcome("bad/name"), actor=A)
    with pytest.raises(TypeError, match="Identity"):
        outcomes_store.record_outcome(outcome(), actor=None)
    assert outcomes_store.outcomes() == []


def test_a_deleted_plan_keeps_its_outcomes(outcomes_store):
    outcomes_store.record_outcome(outcome("Plan B"), actor=B)
    outcomes_store.delete("Plan B", actor=B)
    assert [r.outcome.scenario_name for r in outcomes_store.outcomes()] == ["Plan B"]


def test_a_store_without_the_table_gets_it_on_open(store_url):
    with ScenarioStore(store_url) as store:
        store.save("Plan A", Scenario(name="Plan A"))
    engine = _engine(store_url)
    with engine.begin() as connection:
        connection.execute(text("DROP TABLE plan_outcomes"))
    with engine.connect() as connection:
        assert not inspect(connection).has_table("plan_outcomes")
    with ScenarioStore(store_url) as reopened:
        assert reopened.outcomes() == []
        reopened.record_outcome(outcome(), actor=LOCAL)
        assert len(reopened.outcomes()) == 1
    with engine.connect() as connection:
        assert inspect(connection).has_table("plan_outcomes")
    engine.dispose()


def test_a_table_made_before_issuers_gets_the_column_and_keeps_its_rows(store_url):
    with ScenarioStore(store_url) as store:
        store.save("Plan A", Scenario(name="Plan A"), actor=A)
        store.record_outcome(outcome(), actor=A)
    engine = _engine(store_url)
    with engine.begin() as connection:  # as the subject-only version left it
        connection.execute(text("ALTER TABLE plan_outcomes DROP COLUMN recorded_by_issuer"))
    with ScenarioStore(store_url) as reopened:
        (old,) = reopened.outcomes()
        assert (old.recorded_by_issuer, old.recorded_by_subject, old.recorded_by) == (None, "subject-a",
                                                                                      "a@example.org")
        other = Identity("subject-a", "m@example.com", issuer="https://other.example.com")
        reopened.record_outcome(outcome(period=Q3), actor=other)
        assert [(found.recorded_by_issuer, found.recorded_by) for found in reopened.outcomes()] == [
            ("https://other.example.com", "m@example.com"), (None, "a@example.org")]
    with ScenarioStore(store_url, legacy_owner_issuer=ISSUER) as stated:
        assert [found.recorded_by_issuer for found in stated.outcomes()] == ["https://other.example.com", ISSUER]
    engine.dispose()


def test_a_read_only_store_without_the_table_still_opens(tmp_path):
    path = tmp_path / "scenarios.db"
    with ScenarioStore(f"sqlite:///{path}") as store:
        store.save("Plan A", Scenario(name="Plan A"))
    engine = _engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        connection.execute(text("DROP TABLE plan_outcomes"))
    engine.dispose()
    with ScenarioStore(f"sqlite:///file:{path}?mode=ro&uri=true") as read_only:
        assert read_only.names() == ["Plan A"] and read_only.outcomes() == []
        with pytest.raises(Exception, match="read-only"):
            read_only.record_outcome(outcome(), actor=LOCAL)


def test_two_users_keeping_the_same_plan_and_period_at_once_leave_one_record(outcomes_store):
    url = outcomes_store.url.render_as_string(hide_password=False)
    stores = [ScenarioStore(url), ScenarioStore(url)]
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def keep(store: ScenarioStore, who: Identity, hours: float) -> None:
        barrier.wait(30)
        try:
            for _ in range(5):
                store.record_outcome(outcome(actual_h=hours), actor=who)
        except BaseException as error:  # collected for the assertion below
            errors.append(error)

    threads = [threading.Thread(target=keep, args=(stores[0], A, 111.0)),
               threading.Thread(target=keep, args=(stores[1], B, 122.0))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    for store in stores:
        store.close()
    assert errors == []
    (found,) = outcomes_store.outcomes()
    assert (found.outcome.actual_gpu_hours, found.recorded_by) in ((111.0, "a@example.org"), (122.0, "b@example.org"))


# (who kept it, who removes it, allowed): who kept it or an administrator; the local user only what it kept
ADMIN = Identity("subject-admin", "admin@example.org", admin=True, issuer=ISSUER)
REMOVAL_CASES = [(A, A, True), (A, ADMIN, True), (A, B, False), (A, LOCAL, False), (LOCAL, LOCAL, True),
                 (LOCAL, B, False)]


@pytest.mark.parametrize(("keeper", "remover", "allowed"), REMOVAL_CASES)
def test_a_kept_outcome_is_removed_by_who_kept_it_or_an_admin(outcomes_store, keeper, remover, allowed):
    outcomes_store.record_outcome(outcome(), actor=keeper)
    outcomes_store.record_outcome(outcome("Plan B", Q3), actor=B)
    (found,) = [r for r in outcomes_store.outcomes() if r.outcome.scenario_name == "Plan A"]
    if not allowed:
        with pytest.raises(NotAllowedError, match="only who kept it"):
            outcomes_store.remove_outcome(found.outcome_id, actor=remover)
        assert len(outcomes_store.outcomes()) == 2
        return
    outcomes_store.remove_outcome(found.outcome_id, actor=remover)
    assert [r.outcome.scenario_name for r in outcomes_store.outcomes()] == ["Plan B"]
    entry = outcomes_store.audit_trail()[-1]
    assert (entry.action, entry.name, entry.actor_subject) == ("remove outcome", "Plan A", remover.subject)
    kept = json.loads(entry.previous_json)
    assert (kept["plan_usd"], kept["actual_usd"], kept["period_end"]) == (1_000.0, 1_200.0, "2025-06-30")
    assert [e.action for e in outcomes_store.history("Plan A")][-1] == "remove outcome"


def test_removing_what_is_gone_says_so(outcomes_store):
    outcomes_store.record_outcome(outcome(), actor=A)
    (found,) = outcomes_store.outcomes()
    outcomes_store.remove_outcome(found.outcome_id, actor=A)
    with pytest.raises(ScenarioNotFoundError, match="nothing was removed"):
        outcomes_store.remove_outcome(found.outcome_id, actor=A)
