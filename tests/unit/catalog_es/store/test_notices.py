"""What an append's notification says, and what a follower may skip on its account."""

from __future__ import annotations

from catalog_es.store.notices import kinds_suffix, parse_notice


def test_a_notice_names_the_head_and_only_the_kinds_appended_to_when_it_has_kinds() -> None:
    notice = parse_notice("1234" + kinds_suffix(["table", "task", "table"]))

    assert notice.head == 1234
    assert notice.may_change("table")
    assert notice.may_change("task")
    assert not notice.may_change("warehouse")


def test_a_notice_may_change_every_kind_when_it_is_the_head_alone() -> None:
    """An older server's payload: a follower must look, whatever it follows."""
    notice = parse_notice("1234")

    assert notice.head == 1234
    assert notice.may_change("warehouse")
    assert notice.may_change("service-principal")


def test_a_notice_has_no_head_and_may_change_everything_when_the_payload_is_foreign() -> None:
    notice = parse_notice("hello")

    assert notice.head is None
    assert notice.may_change("warehouse")
