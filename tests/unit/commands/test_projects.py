"""Project commands without PostgreSQL: create, rename and delete, given project and warehouse rows."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from fakes import WAREHOUSE, FakeCatalogState, fake_context

from catalog_es.errors import AlreadyExistsError, BadRequestError, NoSuchProjectError, NotEmptyError
from catalog_es.events import ProjectCreated, ProjectDeleted, ProjectRenamed
from catalog_es.state import ProjectRow
from catalog_es.store.eventstore import EventMetadata
from commands.projects import (
    CreateProject,
    DeleteProject,
    RenameProject,
    handle_create_project,
    handle_delete_project,
    handle_rename_project,
)

META = EventMetadata(actor="tester")
EMPTY = ProjectRow(id=uuid.UUID(int=7), name="empty", version=2)
BUSY = ProjectRow(id=WAREHOUSE.project_id, name="busy")  # holds the warehouse


def _catalog() -> FakeCatalogState:
    return FakeCatalogState(projects=[EMPTY, BUSY])


def test_create_project_records_it_under_a_new_id_or_the_one_asked_for():
    ctx, store = fake_context(_catalog())
    new_id = asyncio.run(handle_create_project(CreateProject("sales", META), ctx))
    chosen = uuid.UUID(int=99)
    assert asyncio.run(handle_create_project(CreateProject("ops", META, project_id=chosen), ctx)) == chosen
    assert store.appended == [
        ProjectCreated(project_id=new_id, name="sales"),
        ProjectCreated(project_id=chosen, name="ops"),
    ]


def test_create_project_refuses_a_taken_id_and_bad_names_and_appends_nothing():
    ctx, store = fake_context(_catalog())
    with pytest.raises(AlreadyExistsError):
        asyncio.run(handle_create_project(CreateProject("again", META, project_id=EMPTY.id), ctx))
    for name in ["", " padded", "a/b", "x" * 129]:
        with pytest.raises(BadRequestError):
            asyncio.run(handle_create_project(CreateProject(name, META), ctx))
    assert store.appended == []


def test_rename_project_records_the_new_name_at_the_row_version():
    ctx, store = fake_context(_catalog())
    asyncio.run(handle_rename_project(RenameProject(EMPTY.id, "renamed", META), ctx))
    assert store.appended == [ProjectRenamed(project_id=EMPTY.id, name="renamed")]
    assert store.versions[f"project-{EMPTY.id}"] == 3


def test_rename_project_refuses_a_missing_project_and_a_bad_name():
    ctx, store = fake_context(_catalog())
    with pytest.raises(NoSuchProjectError):
        asyncio.run(handle_rename_project(RenameProject(uuid.UUID(int=404), "x", META), ctx))
    with pytest.raises(BadRequestError):
        asyncio.run(handle_rename_project(RenameProject(EMPTY.id, "a/b", META), ctx))
    assert store.appended == []


def test_delete_project_records_the_deletion_only_once_it_holds_no_warehouse():
    ctx, store = fake_context(_catalog())
    with pytest.raises(NotEmptyError):
        asyncio.run(handle_delete_project(DeleteProject(BUSY.id, META), ctx))
    with pytest.raises(NoSuchProjectError):
        asyncio.run(handle_delete_project(DeleteProject(uuid.UUID(int=404), META), ctx))
    assert store.appended == []
    asyncio.run(handle_delete_project(DeleteProject(EMPTY.id, META), ctx))
    assert store.appended == [ProjectDeleted(project_id=EMPTY.id)]
