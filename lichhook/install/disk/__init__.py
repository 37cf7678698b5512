"""Files and their owners: planned edits, backups, atomic writes and running as the
home's owner."""
