"""moto's server (`python moto_iam_server.py -H 127.0.0.1 -p PORT`) that also enforces AssumeRole session policies.

moto checks an assumed role's own policies but keeps the `Policy` passed to AssumeRole without applying it.
AWS allows a request made with such credentials only when the role's policies *and* the session policy allow
it, and denies it when either denies it. This adds that second check, with IAM's own matching rules (`*`, `?`
and the `${*}`, `${?}`, `${$}` escapes in resources and `StringLike` values) and the `s3:prefix` condition key.
It also counts AssumeRole calls in a file (`MOTO_ASSUME_ROLE_LOG`). Everything else is moto's unchanged.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Final

from moto.iam import access_control
from moto.server import main
from moto.sts.models import STSBackend, sts_backends

_ESCAPES: Final = {"${*}": "*", "${?}": "?", "${$}": "$"}


def _pattern(text: str) -> re.Pattern[str]:
    out, index = [], 0
    while index < len(text):
        escape = text[index : index + 4]
        if escape in _ESCAPES:
            out.append(re.escape(_ESCAPES[escape]))
            index += 4
            continue
        char = text[index]
        out.append(".*" if char == "*" else "." if char == "?" else re.escape(char))
        index += 1
    return re.compile("".join(out), re.DOTALL)


def _listed(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def _matches(patterns: Any, value: str, *, ignore_case: bool = False) -> bool:
    flags = value.lower() if ignore_case else value
    return any(_pattern(p.lower() if ignore_case else p).fullmatch(flags) for p in _listed(patterns))


def _condition_holds(condition: dict[str, Any], request: dict[str, Any]) -> bool:
    """StringLike/StringEquals on request keys (`s3:prefix`); any other operator fails closed."""
    for operator, tests in condition.items():
        for key, expected in tests.items():
            actual = _listed(request.get(key.split(":", 1)[-1]))
            if operator == "StringLike":
                if not any(_matches(expected, value) for value in actual):
                    return False
            elif operator == "StringEquals":
                if not any(value in _listed(expected) for value in actual):
                    return False
            else:
                return False
    return True


def session_policy_allows(policy: str, action: str, resource: str, request: dict[str, Any]) -> bool:
    allowed = False
    for statement in _listed_statements(json.loads(policy)):
        if not _matches(statement.get("Action", []), action, ignore_case=True):
            continue
        if not _matches(statement.get("Resource", []), resource):
            continue
        if not _condition_holds(statement.get("Condition", {}), request):
            continue
        if statement.get("Effect") == "Deny":
            return False
        allowed = True
    return allowed


def _listed_statements(document: dict[str, Any]) -> list[dict[str, Any]]:
    statements = document.get("Statement", [])
    return [statements] if isinstance(statements, dict) else list(statements)


def _session_policy(key: access_control.AssumedRoleAccessKey) -> str | None:
    for role in sts_backends[key.account_id][key.partition].assumed_roles:
        if role.access_key_id == key._access_key_id:  # moto keeps it private
            policy: str | None = role.policy
            return policy
    return None


_original = access_control.IAMRequestBase.check_action_permitted


def _check_action_permitted(self: Any, resource: str) -> None:
    _original(self, resource)
    key = self._access_key
    if isinstance(key, access_control.AssumedRoleAccessKey):
        policy = _session_policy(key)
        if policy and not session_policy_allows(policy, self._action, resource, self._data):
            self._raise_access_denied()


access_control.IAMRequestBase.check_action_permitted = _check_action_permitted  # type: ignore[method-assign]

_assume_role = STSBackend.assume_role


def _counted_assume_role(self: Any, *args: Any, **kwargs: Any) -> Any:
    """Each AssumeRole answered adds a line to `$MOTO_ASSUME_ROLE_LOG` (the benchmark counts STS calls there)."""
    role = _assume_role(self, *args, **kwargs)
    if path := os.environ.get("MOTO_ASSUME_ROLE_LOG"):
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{role.session_name}\n")
    return role


STSBackend.assume_role = _counted_assume_role  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
