"""Editing a harness's config in place: JSON (with comments), TOML and text blocks,
lichhook's entries in them, byte for byte around what lichhook does not own."""
