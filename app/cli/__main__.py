"""`python -m app.cli`: the `rightsizer` command."""

from app.cli import main

main()
