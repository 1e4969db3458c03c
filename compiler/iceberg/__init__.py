"""Iceberg's own vocabulary, below everything else in the compiler: types and their promotions, names, transforms,
nested types and partition values. Nothing here knows the policy format or a table's state."""
