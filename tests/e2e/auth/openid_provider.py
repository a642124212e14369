"""A real OpenID provider for the tests: node-oidc-provider (tests/oidc, installed from npm on first use)."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

OIDC_DIR = Path(__file__).resolve().parents[2] / "oidc"
AUDIENCE = "catalog-es"
RESOURCE = "urn:catalog-es:api"
SCOPE = "catalog openid"
CONSOLE_CLIENT = "console"


def ensure_installed() -> None:
    """`npm ci` from the committed lock file, once (node_modules is not in git)."""
    if (OIDC_DIR / "node_modules" / "oidc-provider").is_dir():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to install the test OpenID provider (tests/oidc)")
    subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=OIDC_DIR, check=True, capture_output=True)


def new_signing_key(kid: str) -> dict[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk: dict[str, str] = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key))
    return {**jwk, "kid": kid, "use": "sig", "alg": "RS256"}


class OpenIdProvider:
    """One node process; `clients` maps client id → (secret, roles). Restartable with other keys on its port."""

    def __init__(
        self,
        workdir: Path,
        port: int,
        clients: dict[str, tuple[str, list[str]]],
        console_redirect_uri: str | None = None,
    ) -> None:
        """`console_redirect_uri`: also a public client `console` for the authorization-code grant with PKCE,
        redirecting there (the console's `/ui` on the catalog's port, known before the catalog starts)."""
        self.workdir, self.port, self.clients = workdir, port, clients
        self.console_redirect_uri = console_redirect_uri
        self.process: subprocess.Popen[bytes] | None = None
        self.keys = [new_signing_key("key-1")]

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token_endpoint(self) -> str:
        return f"{self.issuer}/token"

    def start(self) -> None:
        ensure_installed()
        config = {
            "port": self.port,
            "keys": self.keys,
            "clients": [
                {"client_id": cid, "client_secret": secret, "roles": roles}
                for cid, (secret, roles) in self.clients.items()
            ],
            "audience": AUDIENCE,
            "resource": RESOURCE,
            "scope": SCOPE,
        }
        if self.console_redirect_uri:
            config["console"] = {"client_id": CONSOLE_CLIENT, "redirect_uri": self.console_redirect_uri}
        path = self.workdir / f"oidc-{self.port}.json"
        path.write_text(json.dumps(config))
        self.process = subprocess.Popen(
            ["node", str(OIDC_DIR / "provider.mjs"), str(path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        assert self.process.stdout is not None
        output: list[bytes] = []
        for line in self.process.stdout:
            output.append(line)
            if line.startswith(b"listening"):
                break
        else:
            raise RuntimeError(f"oidc-provider did not start: {b''.join(output).decode()}")
        # Keep draining its output so the pipe never fills up.
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def rotate_keys(self) -> None:
        """Restart signing with a brand-new key (the old one is gone from the JWKS)."""
        self.stop()
        self.keys = [new_signing_key(f"key-{len(self.keys) + 1}-rotated")]
        self.start()

    def token(self, client_id: str) -> str:
        secret, _ = self.clients[client_id]
        response = httpx.post(
            self.token_endpoint,
            data={
                "grant_type": "client_credentials",
                "client_id": client_id,
                "client_secret": secret,
                "scope": "catalog",
            },
            timeout=10,
        )
        response.raise_for_status()
        return str(response.json()["access_token"])
