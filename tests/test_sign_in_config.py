"""Sign-in configuration: secrets stay out of git, the committed template holds none, and PLANNER_ADMINS is
validated like every other setting."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from dashboard import settings

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / ".streamlit" / "secrets.toml.example"


def test_secrets_toml_is_ignored_by_git_and_the_template_is_not():
    assert ".streamlit/secrets.toml" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    ignored = subprocess.run(["git", "check-ignore", "-q", ".streamlit/secrets.toml"], cwd=ROOT, check=False)
    template = subprocess.run(["git", "check-ignore", "-q", str(TEMPLATE.relative_to(ROOT))], cwd=ROOT, check=False)
    assert (ignored.returncode, template.returncode) == (0, 1)


def test_the_template_configures_a_provider_with_placeholders_only():
    auth = tomllib.loads(TEMPLATE.read_text(encoding="utf-8"))["auth"]
    assert auth["redirect_uri"].endswith("/oauth2callback")
    assert auth["cookie_secret"].startswith("REPLACE-")
    providers = {name: value for name, value in auth.items() if isinstance(value, dict)}
    assert providers, "the template names no provider"
    for provider in providers.values():
        assert provider["client_secret"].startswith("REPLACE-") and provider["client_id"].startswith("REPLACE-")
        assert provider["server_metadata_url"].endswith("/.well-known/openid-configuration")


def test_planner_admins_are_comma_separated_emails_or_issuer_subject_pairs(monkeypatch):
    monkeypatch.delenv(settings.ADMINS, raising=False)
    assert settings.admins() == frozenset()
    monkeypatch.setenv(settings.ADMINS, " boss@example.org, https://sso.example.org/realms/planner#1234567890 ,,")
    assert settings.admins() == {"boss@example.org", "https://sso.example.org/realms/planner#1234567890"}
    longest = "https://" + "i" * 992 + "#" + "s" * 255  # an issuer of 1,000 characters and a subject of 255
    monkeypatch.setenv(settings.ADMINS, longest)
    assert settings.admins() == {longest}
    monkeypatch.setenv(settings.ADMINS, longest + "s")
    with pytest.raises(settings.SettingError, match="ISSUER#SUBJECT pairs \\(1–1256\\)"):
        settings.admins()


@pytest.mark.parametrize("value", ["two words@example.org", "tab\there", "x@" + "x" * 1255])
def test_bad_planner_admins_are_refused_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv(settings.ADMINS, value)
    with pytest.raises(settings.SettingError, match="PLANNER_ADMINS must be comma-separated"):
        settings.admins()


@pytest.mark.parametrize("value", ["1234567890", "boss@example.org,alice-sub", "#1234", "https://sso.example.org#",
                                   "@"])
def test_a_bare_subject_in_planner_admins_is_refused_with_the_form_to_use(monkeypatch, value):
    monkeypatch.setenv(settings.ADMINS, value)
    with pytest.raises(settings.SettingError, match="neither an e-mail address nor ISSUER#SUBJECT"):
        settings.admins()


@pytest.mark.parametrize("value, expected", [("", None), ("  https://sso.example.org  ", "https://sso.example.org")])
def test_the_legacy_owner_issuer_is_one_issuer_or_none(monkeypatch, value, expected):
    monkeypatch.setenv(settings.LEGACY_OWNER_ISSUER, value)
    assert settings.legacy_owner_issuer() == expected


@pytest.mark.parametrize("value", ["https://a.example.org https://b.example.org", "https://a.example.org#x",
                                   "x" * 1001])
def test_a_bad_legacy_owner_issuer_is_refused_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv(settings.LEGACY_OWNER_ISSUER, value)
    with pytest.raises(settings.SettingError, match="PLANNER_LEGACY_OWNER_ISSUER must be one OIDC issuer"):
        settings.legacy_owner_issuer()


STORE_WRITES = {"save", "import_scenarios", "rename", "duplicate", "delete", "adopt"}


def _store_writes(path: Path):
    """Calls like `scenario_store().save(...)` or `store.delete(...)` in one file: (line, method, keywords)."""
    import ast

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in STORE_WRITES):
            continue
        target = node.func.value
        is_store = (isinstance(target, ast.Call) and isinstance(target.func, ast.Name)
                    and target.func.id == "scenario_store") or (isinstance(target, ast.Name) and target.id == "store")
        if is_store:
            yield node.lineno, node.func.attr, {keyword.arg for keyword in node.keywords}


def test_every_store_write_of_the_app_names_its_actor():
    """The store's actor defaults to the anonymous local user; the app must always say who acts."""
    files = sorted((ROOT / "dashboard" / "ui").glob("*.py")) + sorted((ROOT / "dashboard" / "app_pages").glob("*.py"))
    found = [(path.name, line, method, keywords) for path in files for line, method, keywords in _store_writes(path)]
    assert len(found) >= 7, found  # the Compare page's actions and the Plan page's save
    assert [(name, line, method) for name, line, method, keywords in found if "actor" not in keywords] == []
