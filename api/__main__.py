"""`python -m api` runs the catalog-es CLI."""

from api.cli import main

main()
