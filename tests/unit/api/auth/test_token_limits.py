"""The token endpoint's buckets on a hand-moved clock: a burst, a steady rate, Retry-After, and bounded memory."""

from __future__ import annotations

from api.auth.token_limits import TokenBuckets, TokenRequestLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_buckets_allow_a_burst_then_one_request_per_interval_when_a_key_keeps_asking() -> None:
    clock = Clock()
    buckets = TokenBuckets(6, clock=clock)  # one every 10 s, six at once
    for _ in range(6):
        assert buckets.wait_seconds("a") == 0
        buckets.take("a")
    assert buckets.wait_seconds("a") == 10
    clock.now += 9.5
    assert buckets.wait_seconds("a") == 1
    clock.now += 0.5
    assert buckets.wait_seconds("a") == 0
    assert buckets.wait_seconds("b") == 0  # another key has its own bucket


def test_buckets_forget_the_least_recently_used_key_when_full() -> None:
    buckets = TokenBuckets(1, max_keys=2, clock=Clock())
    buckets.take("a")
    buckets.take("b")
    buckets.take("c")  # `a` is dropped: memory stays bounded whatever keys arrive
    assert buckets.wait_seconds("b") > 0
    assert buckets.wait_seconds("a") == 0


def test_limiter_counts_nothing_when_either_limit_refuses() -> None:
    clock = Clock()
    limiter = TokenRequestLimiter(2, 3, clock=clock)
    assert [limiter.admit("client", "peer") for _ in range(3)] == [0, 0, 30]  # the client's limit
    assert limiter.admit("other", "peer") == 0  # the peer's third
    assert limiter.admit("third", "peer") == 20  # the peer's limit, whatever client id
    assert limiter.admit("third", "elsewhere") == 0  # refused requests took nothing from `third`
