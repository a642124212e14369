"""Where the catalog API is mounted (the signer's endpoint and the OAuth token route are named under it)."""

PATH = "/catalog/v1"
