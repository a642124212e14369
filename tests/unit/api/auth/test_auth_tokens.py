"""Bearer-token parsing and the principal derived from verified claims (no provider needed)."""

from __future__ import annotations

import pytest

from api.auth.middleware import bearer_token
from api.auth.oidc import OidcConfig, TokenRejectedError, principal_from_claims, split_list

CONFIG = OidcConfig("http://idp.example", roles_claim="resource_access.catalog.roles")


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (b"Bearer abc.def.ghi", "abc.def.ghi"),
        (b"bearer   abc", "abc"),
        (b"Bearer None", None),  # pyiceberg without a token
        (b"Bearer ", None),
        (b"Basic dXNlcjpwdw==", None),
    ],
)
def test_bearer_token_is_read_when_the_header_is_a_bearer_token(header, expected):
    assert bearer_token({"headers": [(b"authorization", header)]}) == expected


def test_bearer_token_is_none_when_there_is_no_authorization_header():
    assert bearer_token({"headers": [(b"accept", b"*/*")]}) is None


def test_principal_prefers_oid_then_sub_when_no_subject_claim_is_configured():
    assert principal_from_claims({"oid": "o-1", "sub": "s-1"}, CONFIG).user_id == "oidc~o-1"
    assert principal_from_claims({"sub": "s-1"}, CONFIG).user_id == "oidc~s-1"
    custom = OidcConfig("http://idp.example", subject_claim="preferred_username")
    assert principal_from_claims({"sub": "s", "preferred_username": "pat"}, custom).user_id == "oidc~pat"


def test_principal_is_rejected_when_the_subject_claim_is_missing():
    with pytest.raises(TokenRejectedError):
        principal_from_claims({"email": "x@example.com"}, CONFIG)


def test_principal_names_and_roles_come_from_the_claims_when_present():
    human = principal_from_claims(
        {
            "sub": "u1",
            "given_name": "Ada",
            "family_name": "Lovelace",
            "upn": "ada@example.com",
            "resource_access": {"catalog": {"roles": ["readers", "writers"]}},
        },
        CONFIG,
    )
    assert (human.name, human.email, human.user_type) == ("Ada Lovelace", "ada@example.com", "human")
    assert human.roles == ("readers", "writers")
    machine = principal_from_claims({"sub": "svc", "app_displayname": "ETL"}, CONFIG)
    assert (machine.name, machine.user_type, machine.roles) == ("ETL", "application", ())


def test_split_list_drops_blanks_when_given_a_comma_list():
    assert split_list(" a, b,,c ") == ("a", "b", "c")
    assert split_list(None) == ()
