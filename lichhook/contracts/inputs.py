"""What a contract reads of an adapter's report and of the event it was made of.

The shapes of ``lichhook.adapter.Report`` and ``Event`` as the contract modules use them,
for the type checker: the contracts stand below the adapter API, which imports them, so
they name these shapes rather than those classes. Only annotations refer to this module;
no hook imports it at run time (it imports ``typing``).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Protocol


class Asked(Protocol):
    """A report as an adapter asks for it."""

    contract: str
    fields: Dict[str, Any]
    provider_session_id: Optional[str]
    placeholder: bool


class Happened(Protocol):
    """The event a report is made of."""

    provider: str

    @property
    def last_title(self) -> Optional[str]: ...
