"""Security suite fixtures: the e2e servers (anonymous, OIDC + builtin authz), moto S3, and servers a module shares."""

from __future__ import annotations

from tests.e2e.auth.conftest import (  # noqa: F401 - fixtures
    authz_catalog,
    idp,
    module_authz_catalog,
    module_keyed_authz_catalog,
    secured_catalog,
)
from tests.e2e.conftest import catalog, rest, s3_endpoint  # noqa: F401 - fixtures
from tests.security.isolated_server import isolated_catalog, module_isolated_catalog  # noqa: F401 - fixtures
