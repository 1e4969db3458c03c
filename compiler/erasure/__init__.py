"""Record-level erasure (privacy law): requests, which rows of which tables they reach, and the proof."""
