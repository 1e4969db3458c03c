"""Lifecycle maintenance: table health from metadata, the actions it calls for, and their SQL."""
