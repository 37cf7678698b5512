"""JSON integers of any length.

Python refuses to turn a string of more than 4300 digits into an ``int`` (3.11 and later,
and the security releases of 3.9 and 3.10): the conversion takes time quadratic in the
length, and the limit guards servers against it. ``json`` then refuses valid JSON holding
such a number. ``json_int`` reads it as an exact ``decimal.Decimal`` instead, in time
linear in its length; pass it as ``parse_int`` to ``json.loads``.
"""

from __future__ import annotations

from decimal import Decimal


def json_int(digits: str) -> int | Decimal:
    """``int(digits)``, or ``Decimal(digits)`` when it has more digits than ``int`` takes."""
    try:
        return int(digits)
    except ValueError:
        return Decimal(digits)
