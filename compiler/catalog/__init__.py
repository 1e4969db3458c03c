"""The catalog as the compiler sees it: which catalog (the rules; runtime/catalog/ reads the configuration)
and a table's current state from its metadata document (runtime/catalog/ reads that from the catalog)."""
