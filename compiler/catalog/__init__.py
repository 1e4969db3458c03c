"""Read-only catalog access through pyiceberg: configuration and current state, no JVM."""
