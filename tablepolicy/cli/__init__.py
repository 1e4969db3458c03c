"""The command line: the only place that prints and maps outcomes to exit codes."""
