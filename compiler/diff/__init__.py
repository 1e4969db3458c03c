"""Desired vs current TableState -> a closed set of typed, classified changes."""
