"""Security suite fixtures: the e2e servers (anonymous, OIDC + builtin authz) and moto S3, reused as they are."""

from __future__ import annotations

from tests.e2e.auth.conftest import authz_catalog, idp, secured_catalog  # noqa: F401 - fixtures
from tests.e2e.conftest import catalog, rest, s3_endpoint  # noqa: F401 - fixtures
from tests.security.isolated_server import isolated_catalog  # noqa: F401 - fixture
