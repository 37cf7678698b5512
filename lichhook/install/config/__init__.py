"""Editing a harness's config in place: JSON (RFC 8259: comments are refused), TOML and text blocks,
lichhook's entries in them, byte for byte around what lichhook does not own."""
