"""structlog configuration; the request id header (api/request_layer.py gives every request an id)."""

from __future__ import annotations

import logging
import sys

import structlog

REQUEST_ID_HEADER = "x-request-id"


def configure_logging(level: str = "info", *, json: bool = True) -> None:
    """JSON lines on stderr (or a console renderer), with request-bound context variables merged in."""
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelNamesMapping()[level.upper()]),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
