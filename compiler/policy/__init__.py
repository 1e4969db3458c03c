"""The policy language: strict, frozen pydantic models whose field descriptions become the JSON Schema."""
