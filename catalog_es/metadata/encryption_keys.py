"""Table encryption keys (spec 1.11 `add-encryption-key` / `remove-encryption-key`), which pyiceberg 0.12 lacks.

Their rules (`ENCRYPTION_KEY_RULES`) sit in the catalog's `UpdateRules` beside pyiceberg's own, so they apply
in order with the others and get the same metadata-log and timestamp handling. Keys live on format-version 3 metadata.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import Field
from pyiceberg.table.metadata import TableMetadata, TableMetadataV3
from pyiceberg.table.update import TableUpdate
from pyiceberg.typedef import IcebergBaseModel

from catalog_es.metadata.pyiceberg_compat import UpdateContext, UpdateRule

KEY_ID_PROPERTY = "encryption.key-id"


class EncryptedKey(IcebergBaseModel):
    key_id: str = Field(alias="key-id")
    encrypted_key_metadata: str = Field(alias="encrypted-key-metadata")
    encrypted_by_id: str | None = Field(alias="encrypted-by-id", default=None)
    properties: dict[str, str] | None = Field(default=None)


class KeyedTableMetadataV3(TableMetadataV3):
    """Format-version 3 metadata that keeps its `encryption-keys`."""

    encryption_keys: list[EncryptedKey] = Field(alias="encryption-keys", default_factory=list)


class AddEncryptionKeyUpdate(IcebergBaseModel):
    action: Literal["add-encryption-key"] = Field(default="add-encryption-key")
    encryption_key: EncryptedKey = Field(alias="encryption-key")


class RemoveEncryptionKeyUpdate(IcebergBaseModel):
    action: Literal["remove-encryption-key"] = Field(default="remove-encryption-key")
    key_id: str = Field(alias="key-id")


if TYPE_CHECKING:
    AnyTableUpdate = TableUpdate | AddEncryptionKeyUpdate | RemoveEncryptionKeyUpdate
else:
    # pyiceberg's union, extended; one discriminated union so pydantic picks the class by `action`.
    AnyTableUpdate = Annotated[
        get_args(TableUpdate)[0] | AddEncryptionKeyUpdate | RemoveEncryptionKeyUpdate,
        Field(discriminator="action"),
    ]


def keyed(metadata: TableMetadata) -> KeyedTableMetadataV3:
    """Raises: ValueError for metadata below format version 3."""
    if isinstance(metadata, KeyedTableMetadataV3):
        return metadata
    if metadata.format_version != 3:
        raise ValueError(f"Encryption keys need format version 3, the table has {metadata.format_version}")
    fields: dict[str, Any] = dict(metadata)
    return KeyedTableMetadataV3.model_construct(**fields, encryption_keys=[])


def add_encryption_key(update: AddEncryptionKeyUpdate, base: TableMetadata, context: UpdateContext) -> TableMetadata:
    metadata = keyed(base)
    if any(key.key_id == update.encryption_key.key_id for key in metadata.encryption_keys):
        raise ValueError(f"Encryption key {update.encryption_key.key_id} already exists")
    context.add_update(update)  # type: ignore[arg-type]
    return metadata.model_copy(update={"encryption_keys": [*metadata.encryption_keys, update.encryption_key]})


def remove_encryption_key(
    update: RemoveEncryptionKeyUpdate, base: TableMetadata, context: UpdateContext
) -> TableMetadata:
    metadata = keyed(base)
    remaining = [key for key in metadata.encryption_keys if key.key_id != update.key_id]
    if len(remaining) == len(metadata.encryption_keys):
        raise ValueError(f"Encryption key {update.key_id} does not exist")
    context.add_update(update)  # type: ignore[arg-type]
    return metadata.model_copy(update={"encryption_keys": remaining})


ENCRYPTION_KEY_RULES: dict[type, UpdateRule] = {
    AddEncryptionKeyUpdate: add_encryption_key,
    RemoveEncryptionKeyUpdate: remove_encryption_key,
}
