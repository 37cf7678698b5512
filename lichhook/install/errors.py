"""The errors install, uninstall and doctor stop on, for a person to read: each message
names what was refused and the fix."""


class ConfigError(Exception):
    """A config file lichhook must not touch; the message names the file and the fix."""


class AssembleError(Exception):
    """Why no archive could be assembled from this Python's installed packages."""
