"""Registering lichhook in each harness: ``install``, ``uninstall`` and ``doctor``.

Cold paths only: nothing here runs when a harness calls a hook.
"""
