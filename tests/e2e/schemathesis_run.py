"""Run schemathesis (its CLI, as a user would) against a running server and check its verdict."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

SEED = 1


def run_schemathesis(
    spec: str,
    url: str,
    workdir: Path,
    *,
    parameters: dict[str, str],
    checks: str,
    examples_per_operation: int,
    exclude_operations: Iterable[str] = (),
    extra: Iterable[str] = (),
    timeout: int = 1200,
) -> str:
    """Run the `examples,coverage,fuzzing` phases with a fixed seed; assert it passed and generated cases.

    `parameters` fills path parameters (schemathesis.toml in `workdir`). Returns the run's summary.
    """
    config = "\n".join(f'"{name}" = "{value}"' for name, value in parameters.items())
    (workdir / "schemathesis.toml").write_text(f"[parameters]\n{config}\n")
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "run",
        spec,
        "--url",
        url,
        *extra,
        "--phases",
        "examples,coverage,fuzzing",
        "--max-examples",
        str(examples_per_operation),
        "--seed",
        str(SEED),
        "--checks",
        checks,
        "--max-failures",
        "100",
        "--no-color",
    ]
    for operation in exclude_operations:
        command += ["--exclude-operation-id", operation]
    result = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=timeout, check=False)
    summary = result.stdout[result.stdout.find("SUMMARY") :]
    print(summary)
    assert result.returncode == 0, result.stdout[-8000:]
    assert "generated" in summary, "schemathesis ran no test case"
    return summary
