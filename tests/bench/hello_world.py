"""The HTTP ceiling: a Litestar + msgspec hello-world on uvicorn, served like `catalog-es serve` serves.

Run: `python -m tests.bench.hello_world --port 8400`.
"""

from __future__ import annotations

import argparse

import msgspec
import uvicorn
from litestar import Litestar, get


class Hello(msgspec.Struct):
    defaults: dict[str, str]
    overrides: dict[str, str]


@get("/hello", sync_to_thread=False)
def hello() -> Hello:
    return Hello(defaults={}, overrides={"hello": "world"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8400)
    args = parser.parse_args()
    app = Litestar(route_handlers=[hello], openapi_config=None, logging_config=None)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
