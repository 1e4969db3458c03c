"""``python -m tablepolicy``: the command line, as the ``tablepolicy`` script runs it."""

from .cli.app import main

main()
