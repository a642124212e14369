"""What a new table gets when the client does not say: the Parquet codec the Java reference server sets."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import RestApi
from tests.e2e.rest_helpers import create_namespace, create_table, load_table

pytestmark = pytest.mark.e2e

CODEC = "write.parquet.compression-codec"


def test_new_table_gets_zstd_parquet_codec_unless_the_client_chooses_one(rest: RestApi) -> None:
    create_namespace(rest, "codecs")

    default = create_table(rest, "codecs", "default")
    chosen = create_table(rest, "codecs", "chosen", {"properties": {CODEC: "snappy"}})
    staged = create_table(rest, "codecs", "staged", {"stage-create": True})

    assert default.status_code == 200, default.text
    assert chosen.status_code == 200, chosen.text
    assert staged.status_code == 200, staged.text
    assert load_table(rest, "codecs", "default")["metadata"]["properties"][CODEC] == "zstd"
    assert load_table(rest, "codecs", "chosen")["metadata"]["properties"][CODEC] == "snappy"
    assert staged.json()["metadata"]["properties"][CODEC] == "zstd"
