"""The store's errors: one-line, user-facing messages that say what to do, one subclass per kind."""

from __future__ import annotations


class StoreError(Exception):
    """A store operation that cannot be done; the message is one line saying what to do instead."""


class InvalidNameError(StoreError):
    """The scenario name breaks the naming rules (see dashboard.store.names)."""


class NameTakenError(StoreError):
    """Another saved scenario already has this name."""


class ScenarioNotFoundError(StoreError):
    """No saved scenario has this name."""


class StoreUnavailableError(StoreError):
    """The database cannot be reached or used (server down, file locked, bad URL)."""


class StoreReadOnlyError(StoreUnavailableError):
    """The database refuses writes (read-only server, transaction or file, or no write permission)."""


class StoreFullError(StoreUnavailableError):
    """The database has no space left to write."""


class NotAllowedError(StoreError):
    """The acting user may not change this scenario (it belongs to someone else); nothing was changed."""
