-- Users, roles, the object hierarchy and privileges: the read model every authorization check is an index lookup in.

CREATE TABLE authz_users (
    id text PRIMARY KEY,                 -- oidc~<subject>
    name text NOT NULL,
    email text,
    user_type text NOT NULL,
    last_updated_with text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz
);

CREATE TABLE authz_roles (
    id uuid PRIMARY KEY,
    project_id uuid NOT NULL,
    name text NOT NULL,
    name_key text NOT NULL,
    description text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz,
    UNIQUE (project_id, name_key)
);
CREATE INDEX authz_roles_name ON authz_roles (name_key);  -- roles named by a token's roles claim

-- Every securable object with its ancestors (itself first, the server last): inheritance is `= ANY(ancestors)`.
CREATE TABLE authz_objects (
    id uuid PRIMARY KEY,
    kind text NOT NULL,
    parent_id uuid,
    ancestors uuid[] NOT NULL,
    managed boolean NOT NULL DEFAULT false,  -- itself or an ancestor has managed access
    warehouse_id uuid,                       -- namespaces: to find a child's parent by key
    ns_key text
);
CREATE INDEX authz_objects_ancestors ON authz_objects USING gin (ancestors);
CREATE UNIQUE INDEX authz_objects_namespace_key ON authz_objects (warehouse_id, ns_key) WHERE ns_key IS NOT NULL;

INSERT INTO authz_objects (id, kind, parent_id, ancestors)
VALUES ('ffffffff-ffff-ffff-ffff-ffffffffffff', 'server', NULL, ARRAY['ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid]);

CREATE TABLE authz_managed_access (
    id uuid PRIMARY KEY
);

-- Direct grants: principal is `user:<id>` or `role:<uuid>` (the role's assignees).
CREATE TABLE authz_grants (
    object_id uuid NOT NULL,
    principal text NOT NULL,
    privilege text NOT NULL,
    PRIMARY KEY (object_id, principal, privilege)
);
CREATE INDEX authz_grants_principal ON authz_grants (principal, object_id);

-- Every role a member (`user:<id>` or `role:<uuid>`) acts as, transitively through nested roles
-- (recomputed when memberships change).
CREATE TABLE authz_principals (
    member text NOT NULL,
    principal text NOT NULL,
    PRIMARY KEY (member, principal)
);
