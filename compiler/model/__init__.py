"""Engine-agnostic model of Iceberg tables: types, transforms, promotions and TableState."""
