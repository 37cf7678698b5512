from lichhook.cli import entry

entry()
