"""Settings from `CATALOG_ES__*` environment variables and keyword overrides."""

from __future__ import annotations

import msgspec
import pytest

from api.settings import Settings, load_settings


def test_load_settings_gives_defaults_when_environment_is_empty():
    assert load_settings({}) == Settings()


def test_load_settings_reads_pg_dsn_when_variable_is_set():
    settings = load_settings({"CATALOG_ES__PG_DSN": "postgresql://u@db/catalog"})
    assert settings.pg_dsn == "postgresql://u@db/catalog"


def test_load_settings_converts_port_to_int_when_given_as_string():
    settings = load_settings({"CATALOG_ES__PORT": "9000"})
    assert settings.port == 9000
    assert isinstance(settings.port, int)


def test_load_settings_converts_bool_when_given_as_string():
    assert load_settings({"CATALOG_ES__LOG_JSON": "false"}).log_json is False


def test_load_settings_ignores_variables_when_prefix_differs():
    assert load_settings({"CATALOG_ES_PORT": "1", "PORT": "2", "catalog_es__port": "3"}) == Settings()


def test_load_settings_raises_when_nested_key_is_unknown():
    with pytest.raises(msgspec.ValidationError, match="unknown field `log`"):
        load_settings({"CATALOG_ES__LOG__LEVEL": "debug"})


@pytest.mark.parametrize(
    "environ",
    [
        {"CATALOG_ES__PORT": "9000", "CATALOG_ES__PORT__EXTRA": "1"},
        {"CATALOG_ES__PORT__EXTRA": "1", "CATALOG_ES__PORT": "9000"},
    ],
)
def test_load_settings_raises_validation_error_when_a_key_is_both_leaf_and_parent(environ):
    with pytest.raises(msgspec.ValidationError):
        load_settings(environ)


def test_load_settings_lets_keyword_override_win_when_both_are_set():
    settings = load_settings({"CATALOG_ES__PORT": "9000", "CATALOG_ES__HOST": "0.0.0.0"}, port=7000)
    assert settings.port == 7000
    assert settings.host == "0.0.0.0"


def test_load_settings_keeps_environment_value_when_override_is_none():
    assert load_settings({"CATALOG_ES__PORT": "9000"}, port=None).port == 9000


def test_load_settings_raises_when_key_is_unknown():
    with pytest.raises(msgspec.ValidationError, match="unknown field `nope`"):
        load_settings({"CATALOG_ES__NOPE": "1"})


def test_load_settings_raises_when_override_key_is_unknown():
    with pytest.raises(msgspec.ValidationError):
        load_settings({}, nope="1")


def test_load_settings_raises_when_value_is_malformed():
    with pytest.raises(msgspec.ValidationError, match=r"\$\.port"):
        load_settings({"CATALOG_ES__PORT": "not-a-number"})


def test_load_settings_reads_os_environ_when_no_mapping_is_given(monkeypatch):
    monkeypatch.setenv("CATALOG_ES__DEFAULT_WAREHOUSE", "lake")
    assert load_settings().default_warehouse == "lake"


def test_max_namespace_depth_is_lakekeepers_five_unless_configured():
    assert Settings().max_namespace_depth == 5
    assert load_settings({"CATALOG_ES__MAX_NAMESPACE_DEPTH": "8"}).max_namespace_depth == 8
    with pytest.raises(msgspec.ValidationError):
        load_settings({"CATALOG_ES__MAX_NAMESPACE_DEPTH": "0"})
