"""The one place lichhook's own version number lives.

(The lich-plugin release whose contracts it implements, sent as ``X-Lich-Plugin``, is
``lichhook.contracts.RELEASE``.)
"""

__version__ = "0.1.0"
