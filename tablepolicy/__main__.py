"""``python -m tablepolicy``: the command line, as the ``tablepolicy`` script runs it."""

from tablepolicy.runtime.cli.app import main

main()
