"""The erasure engine's parts; runtime/erase.py runs them in order."""
