"""The ``plan_outcomes`` table: how a saved plan compared with its actuals, kept in the scenario store's database.

One row per (scenario name, period): the plan (a scenario saved in the store; its name, and its id in the
``scenarios`` table when it was recorded, with no foreign key, so a deleted plan's outcomes stay), when (UTC) and by
whom it was recorded (the acting ``Identity``: OIDC issuer, subject and e-mail, all None for the anonymous local
user),
the actuals' period (the first and last day compared), the bill's currency, the plan's and the actual GPU-hours
and money, whether the data carried costs, and the gap split in three groups, in GPU-hours and in money
(``dashboard.core.plan_accuracy``):

- price = the ``price`` part;
- quantity = ``scale`` + ``experiments`` + ``idle / unattributed``;
- efficiency = ``efficiency`` + ``failures and restarts``.

A kept outcome can be removed by who kept it or an administrator (``ScenarioStore.remove_outcome``, audited as
"remove outcome" in ``scenario_audit`` with the outcome's figures). Recording the same plan for the same period
again replaces the row (an upsert on the UNIQUE constraint, atomic on
SQLite and PostgreSQL). ``ScenarioStore`` creates the table when it opens a store without it
(``ScenarioStore.record_outcome`` and ``ScenarioStore.outcomes`` use it); reads are bounded
(``MAX_OUTCOMES``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Date,
    DateTime,
    Float,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
    UniqueConstraint,
    delete,
    select,
)
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection
from sqlalchemy.schema import CreateIndex, CreateTable

from dashboard.core.plan_accuracy import GROUP_NAMES, PlanOutcome
from dashboard.identity import Identity, shown_actor

MAX_OUTCOMES = 100  # the most outcomes one read returns
DEFAULT_OUTCOMES = 10
UNKNOWN_SEPARATOR = "; "  # between the names of the parts the data could not tell (fixed names, never user text)

metadata = MetaData()
plan_outcomes_table = Table(
    "plan_outcomes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("scenario_name", Text, nullable=False),
    Column("scenario_id", Integer, nullable=True),  # scenarios.id when recorded (no foreign key)
    Column("recorded_at", DateTime(timezone=True), nullable=False),
    Column("recorded_by_subject", Text, nullable=True),  # None: the anonymous local user
    Column("recorded_by_email", Text, nullable=True),
    Column("period_start", Date, nullable=False),
    Column("period_end", Date, nullable=False),
    Column("currency", Text, nullable=True),  # the bill's; None when it names none
    Column("cost_known", Boolean(create_constraint=False), nullable=False),
    Column("plan_gpu_hours", Float, nullable=False),
    Column("plan_usd", Float, nullable=False),
    Column("actual_gpu_hours", Float, nullable=False),
    Column("actual_usd", Float, nullable=False),  # in ``currency``
    Column("price_gpu_hours", Float, nullable=False),
    Column("price_usd", Float, nullable=True),  # the groups' money: None for a bill in another currency
    Column("quantity_gpu_hours", Float, nullable=False),
    Column("quantity_usd", Float, nullable=True),
    Column("efficiency_gpu_hours", Float, nullable=False),
    Column("efficiency_usd", Float, nullable=True),
    Column("unknown_parts", Text, nullable=True),
    Column("recorded_by_issuer", Text, nullable=True),  # added on open to a table made before issuers
    UniqueConstraint("scenario_name", "period_start", "period_end", name="plan_outcomes_plan_period_key"),
)
Index("plan_outcomes_period_end", plan_outcomes_table.c.period_end)
_o = plan_outcomes_table
OUTCOME_FIELDS: tuple[str, ...] = (
    "scenario_name", "period_start", "period_end", "currency", "cost_known", "plan_gpu_hours", "plan_usd",
    "actual_gpu_hours", "actual_usd", *(f"{group}_{unit}" for group in GROUP_NAMES for unit in ("gpu_hours", "usd")),
)


@dataclass(frozen=True)
class RecordedOutcome:
    """A kept outcome with who recorded it and when (``recorded_by``: the e-mail as pages show it)."""

    outcome: PlanOutcome
    recorded_at: datetime
    recorded_by_subject: str | None
    recorded_by_email: str | None
    scenario_id: int | None = None
    recorded_by_issuer: str | None = None
    outcome_id: int | None = None  # plan_outcomes.id: what ``ScenarioStore.remove_outcome`` takes

    @property
    def recorded_by(self) -> str:
        """Who, as a page shows it: the e-mail only, never the subject."""
        return shown_actor(self.recorded_by_subject, self.recorded_by_email)


def create(connection: Connection) -> None:
    """Create the table and its index (nothing when they exist)."""
    connection.execute(CreateTable(_o, if_not_exists=True))
    for index in _o.indexes:
        connection.execute(CreateIndex(index, if_not_exists=True))


def checked_limit(limit: int) -> int:
    """``limit`` when it is a whole number from 1 to ``MAX_OUTCOMES``; ValueError otherwise."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_OUTCOMES:
        raise ValueError(f"read 1–{MAX_OUTCOMES} plan outcomes at a time (got {limit!r})")
    return limit


def upsert(connection: Connection, outcome: PlanOutcome, scenario_name: str, scenario_id: int | None,
           actor: Identity, now: datetime) -> None:
    """Write ``outcome`` for ``scenario_name`` (a validated store name), replacing the row of the same plan and
    period, in one statement."""
    values: dict[str, Any] = {field: getattr(outcome, field) for field in OUTCOME_FIELDS}
    values |= {"scenario_name": scenario_name, "scenario_id": scenario_id, "recorded_at": now,
               "recorded_by_subject": actor.subject, "recorded_by_email": actor.email,
               "recorded_by_issuer": actor.issuer,
               "unknown_parts": UNKNOWN_SEPARATOR.join(outcome.unknown_parts) or None}
    make = postgresql_insert if connection.dialect.name == "postgresql" else sqlite_insert
    statement = make(_o).values(**values)
    replaced = {name: statement.excluded[name] for name in values
                if name not in ("scenario_name", "period_start", "period_end")}
    connection.execute(statement.on_conflict_do_update(
        index_elements=[_o.c.scenario_name, _o.c.period_start, _o.c.period_end], set_=replaced))


def latest(connection: Connection, limit: int, issuer: Any = None) -> list[RecordedOutcome]:
    """The ``limit`` outcomes of the latest periods (by last day, then the latest recorded), newest first.
    ``issuer``: the issuer column to read (NULL for a read-only table made before issuers); the table's by default."""
    issuer = _o.c.recorded_by_issuer if issuer is None else issuer
    columns = [column for column in _o.c if column.name != "recorded_by_issuer"]
    query = (select(*columns, issuer.label("recorded_by_issuer"))
             .order_by(_o.c.period_end.desc(), _o.c.recorded_at.desc(), _o.c.id.desc())
             .limit(checked_limit(limit)))
    return [_recorded(row._mapping) for row in connection.execute(query).all()]


def _day(value: date | datetime) -> date:
    return date(value.year, value.month, value.day)


def _recorded(row: Any) -> RecordedOutcome:
    values = {field: row[field] for field in OUTCOME_FIELDS}
    values["period_start"], values["period_end"] = _day(values["period_start"]), _day(values["period_end"])
    unknown = row["unknown_parts"]
    outcome = PlanOutcome(**values, unknown_parts=tuple(unknown.split(UNKNOWN_SEPARATOR)) if unknown else ())
    at = row["recorded_at"]
    at = at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)  # SQLite hands it back without a zone
    return RecordedOutcome(outcome, at, row["recorded_by_subject"], row["recorded_by_email"], row["scenario_id"],
                           row["recorded_by_issuer"], row["id"])


def removal(connection: Connection, outcome_id: int) -> RecordedOutcome | None:
    """The kept outcome ``outcome_id`` (locked for this transaction), None when there is none."""
    found = connection.execute(select(_o).where(_o.c.id == outcome_id).with_for_update()).first()
    return None if found is None else _recorded(found._mapping)


def remove(connection: Connection, outcome_id: int) -> None:
    """Delete the kept outcome ``outcome_id``."""
    connection.execute(delete(_o).where(_o.c.id == outcome_id))


def described(outcome: PlanOutcome) -> str:
    """A removed outcome's figures as the audit keeps them (JSON: the fields of ``OUTCOME_FIELDS``, dates ISO)."""
    values = {field: getattr(outcome, field) for field in OUTCOME_FIELDS}
    values["period_start"], values["period_end"] = outcome.period_start.isoformat(), outcome.period_end.isoformat()
    return json.dumps(values | {"unknown_parts": list(outcome.unknown_parts)}, sort_keys=True)


__all__ = ["DEFAULT_OUTCOMES", "MAX_OUTCOMES", "RecordedOutcome", "plan_outcomes_table", "remove", "removal"]
