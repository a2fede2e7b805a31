"""Show or hide a Plan control group in an AppTest run, as a click on its pill does (`plan_controls.shown_groups`)."""

from dashboard.ui.plan_controls import DEFAULT_SHOWN, GROUPS_SHOWN


def show_group(at, title: str, shown: bool = True):
    """Add `title` to the groups shown (or take it away); the other groups stay as they are. Returns `at`, not run."""
    current = list(at.session_state[GROUPS_SHOWN]) if GROUPS_SHOWN in at.session_state else list(DEFAULT_SHOWN)
    at.session_state[GROUPS_SHOWN] = [name for name in current if name != title] + ([title] if shown else [])
    return at
