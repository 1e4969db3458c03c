"""The project's caches between runs, in ``.tablepolicy/`` beside ``policies/``: validated models and plans."""
