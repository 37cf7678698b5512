"""The one place the release number lives."""

__version__ = "0.1.0"

# The lich-plugin contract release whose session-start reports lichhook's equal.
# lich reads it from the X-Lich-Plugin header to warn about clients it does not support.
CONTRACT_RELEASE = "0.18.0"
