"""Relocate Java classes into Iceberg's shaded packages: constant-pool UTF8 rewriting and jar repackaging.

This is what Gradle Shadow does for the official Iceberg runtime, reduced to what the runtime needs: every
name under a relocated prefix (slash and dot form) moves below `org/apache/iceberg/shaded/`.
"""

from __future__ import annotations

import re
import struct
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

SHADED_ROOT = "org/apache/iceberg/shaded/"
CLASS_MAGIC = b"\xca\xfe\xba\xbe"
MAX_UTF8_LENGTH = 65_535
# A fixed timestamp makes the repackaged jars byte-for-byte reproducible.
ENTRY_DATE = (2024, 1, 1, 0, 0, 0)
MANIFEST = b"Manifest-Version: 1.0\r\nCreated-By: catalog-es class relocation\r\n\r\n"

# JVM spec §4.4: payload size after the tag byte for every fixed-size constant-pool entry.
_FIXED_PAYLOAD = {
    3: 4,
    4: 4,
    5: 8,
    6: 8,
    7: 2,
    8: 2,
    16: 2,
    19: 2,
    20: 2,
    9: 4,
    10: 4,
    11: 4,
    12: 4,
    17: 4,
    18: 4,
    15: 3,
}
_TWO_SLOTS = {5, 6}  # Long and Double take two constant-pool slots
_UTF8, _CLASS = 1, 7


class ClassFormatError(ValueError):
    """A class file that cannot be parsed."""


class Relocator:
    """Rewrites names under `prefixes` (slash form, ending in '/') to `SHADED_ROOT + prefix`, never twice."""

    def __init__(self, prefixes: Sequence[str]) -> None:
        if not prefixes or any(not prefix.endswith("/") for prefix in prefixes):
            raise ValueError("Relocation prefixes must be non-empty and end with '/'")
        self.prefixes = tuple(prefixes)
        patterns = []
        for separator in ("/", "."):
            root = re.escape(SHADED_ROOT.replace("/", separator).encode())
            names = b"|".join(re.escape(prefix.replace("/", separator).encode()) for prefix in prefixes)
            patterns.append(re.compile(b"(?<!" + root + b")(" + names + b")"))
        self._slash, self._dot = patterns
        self._slash_root = SHADED_ROOT.encode()
        self._dot_root = SHADED_ROOT.replace("/", ".").encode()

    def relocate_bytes(self, text: bytes) -> bytes:
        """Relocate every occurrence of a prefix, slash or dot form, in `text`."""
        text = self._slash.sub(lambda match: self._slash_root + match.group(1), text)
        return self._dot.sub(lambda match: self._dot_root + match.group(1), text)

    def relocate_path(self, path: str) -> str | None:
        """The shaded path of a jar entry under a relocated prefix, else None."""
        for prefix in self.prefixes:
            if path.startswith(prefix):
                return SHADED_ROOT + path
        return None

    def relocate_class(self, data: bytes) -> bytes:
        """Rewrite the Utf8 entries of a class file's constant pool; everything else refers to them by index."""
        pool_start, _, entries = _constant_pool(data)
        out = bytearray(data[:pool_start])
        position = pool_start
        for tag, offset, length in entries:
            if tag != _UTF8:
                continue
            text = data[offset + 3 : offset + 3 + length]
            relocated = self.relocate_bytes(text)
            if relocated != text:
                if len(relocated) > MAX_UTF8_LENGTH:
                    raise ClassFormatError("A relocated constant exceeds 65535 bytes")
                out += data[position:offset]
                out += bytes((_UTF8,)) + struct.pack(">H", len(relocated)) + relocated
                position = offset + 3 + length
        out += data[position:]
        return bytes(out)


def _constant_pool(data: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """(start, end, entries as (tag, offset of the tag, Utf8 length or 0)) of a class file's constant pool."""
    if data[:4] != CLASS_MAGIC or len(data) < 10:
        raise ClassFormatError("Not a class file")
    (count,) = struct.unpack_from(">H", data, 8)
    position, index, entries = 10, 1, []
    try:
        while index < count:
            tag = data[position]
            if tag == _UTF8:
                (length,) = struct.unpack_from(">H", data, position + 1)
                entries.append((tag, position, length))
                position += 3 + length
            elif tag in _FIXED_PAYLOAD:
                entries.append((tag, position, 0))
                position += 1 + _FIXED_PAYLOAD[tag]
            else:
                raise ClassFormatError(f"Unknown constant-pool tag {tag} at byte {position}")
            index += 2 if tag in _TWO_SLOTS else 1
    except (IndexError, struct.error) as error:
        raise ClassFormatError("Truncated constant pool") from error
    return 10, position, entries


def class_references(data: bytes) -> list[str]:
    """Names of the classes a class file's constant pool refers to (Class entries), arrays unwrapped."""
    _, _, entries = _constant_pool(data)
    utf8 = {}
    slot = 1
    slots: dict[int, tuple[int, int, int]] = {}
    for entry in entries:
        slots[slot] = entry
        slot += 2 if entry[0] in _TWO_SLOTS else 1
    for number, (tag, offset, length) in slots.items():
        if tag == _UTF8:
            utf8[number] = data[offset + 3 : offset + 3 + length]
    names = []
    for tag, offset, _ in slots.values():
        if tag == _CLASS:
            (name_index,) = struct.unpack_from(">H", data, offset + 1)
            name = utf8[name_index].decode("utf-8", "replace").lstrip("[")
            if name.startswith("L") and name.endswith(";"):
                name = name[1:-1]
            names.append(name)
    return names


def _dropped(name: str) -> bool:
    """Entries the repackaged jar leaves out: directories, manifests, module descriptors, Maven metadata, signatures."""
    return (
        name.endswith("/")
        or name.rsplit("/", 1)[-1] == "module-info.class"
        or name == "META-INF/MANIFEST.MF"
        or name.startswith("META-INF/maven/")
        or name.upper().endswith((".SF", ".RSA", ".DSA", ".EC"))
    )


def _relocated_entry(relocator: Relocator, name: str, data: bytes) -> tuple[str, bytes]:
    if name.startswith("META-INF/services/"):
        service = name.removeprefix("META-INF/services/")
        return "META-INF/services/" + relocator.relocate_bytes(service.encode()).decode(), relocator.relocate_bytes(
            data
        )
    version_root = ""
    path = name
    if name.startswith("META-INF/versions/"):
        _, _, number, path = name.split("/", 3)
        version_root = f"META-INF/versions/{number}/"
    shaded = relocator.relocate_path(path)
    if shaded is None:
        return name, data  # e.g. httpclient5's public-suffix list, loaded by absolute resource path
    if path.endswith(".class"):
        data = relocator.relocate_class(data)
    return version_root + shaded, data


def _write(target: zipfile.ZipFile, name: str, data: bytes) -> None:
    entry = zipfile.ZipInfo(name, ENTRY_DATE)
    entry.compress_type = zipfile.ZIP_DEFLATED
    target.writestr(entry, data)


def relocate_jars(inputs: Iterable[Path], output: Path, relocator: Relocator) -> int:
    """Repackage `inputs` into `output` with names relocated; returns the class count.

    The first entry of a name wins, except service files, whose providers are merged (as Shadow does).
    """
    seen: set[str] = set()
    services: dict[str, list[bytes]] = {}
    classes = 0
    with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as target:
        _write(target, "META-INF/MANIFEST.MF", MANIFEST)
        for source_path in inputs:
            with zipfile.ZipFile(source_path) as source:
                for info in source.infolist():
                    if _dropped(info.filename):
                        continue
                    name, data = _relocated_entry(relocator, info.filename, source.read(info))
                    if name.startswith("META-INF/services/"):
                        providers = services.setdefault(name, [])
                        providers += [line for line in data.splitlines() if line.strip() and line not in providers]
                    elif name not in seen:
                        seen.add(name)
                        classes += name.endswith(".class")
                        _write(target, name, data)
        for name, providers in services.items():
            _write(target, name, b"\n".join(providers) + b"\n")
    return classes
