"""The privilege model (as Lakekeeper's): which privileges exist on which objects and which imply which."""

from __future__ import annotations

import uuid

from catalog_es.events.access import ObjectKind

# The server is an object like any other, root of every hierarchy (not the NIL UUID: that is the default project).
SERVER_OBJECT_ID = uuid.UUID(int=(1 << 128) - 1)

_DATA = ("describe", "select", "modify")
_GRANTS = ("ownership", "pass_grants", "manage_grants")

PRIVILEGES: dict[ObjectKind, tuple[str, ...]] = {
    "server": ("admin", "operator"),
    "project": ("project_admin", "security_admin", "data_admin", *_DATA, "create"),
    "warehouse": (*_GRANTS, *_DATA, "create"),
    "namespace": (*_GRANTS, *_DATA, "create"),
    "table": (*_GRANTS, *_DATA),
    "view": (*_GRANTS, *_DATA),
    "role": ("assignee", "ownership"),
}

_ADMINS = ("admin", "operator")
_DATA_ADMINS = (*_ADMINS, "project_admin", "data_admin")

# A privilege held on an object or any ancestor of it grants what it implies on the object.
# Ownership implies `manage_grants` too, unless the owned object is under managed access (checked apart).
IMPLIED_BY: dict[str, tuple[str, ...]] = {
    "describe": (
        *_DATA_ADMINS,
        "security_admin",
        "describe",
        "select",
        "modify",
        "create",
        "ownership",
        "manage_grants",
        "assignee",  # members see their role
    ),
    "select": (*_DATA_ADMINS, "select", "modify", "ownership"),
    "modify": (*_DATA_ADMINS, "modify", "ownership"),
    "create": (*_DATA_ADMINS, "create", "ownership"),
    "manage_grants": (*_ADMINS, "project_admin", "security_admin", "manage_grants"),
    "pass_grants": ("pass_grants",),
    "ownership": ("ownership",),
    "assignee": ("assignee",),
    "admin": ("admin",),
    "operator": _ADMINS,
    "project_admin": (*_ADMINS, "project_admin"),
    "security_admin": (*_ADMINS, "project_admin", "security_admin"),
    "data_admin": (*_ADMINS, "project_admin", "data_admin"),
}


def user_principal(user_id: str) -> str:
    return f"user:{user_id}"


def role_principal(role_id: uuid.UUID) -> str:
    return f"role:{role_id}"


def valid_privilege(kind: ObjectKind, privilege: str) -> bool:
    return privilege in PRIVILEGES[kind]
