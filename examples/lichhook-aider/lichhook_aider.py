"""An example lichhook adapter plugin.

It teaches lichhook a harness called "aider" whose hook payload carries the session id as
``{"chat": {"id": "..."}}``. Install it next to the Python that runs lichhook.pyz
(``python3 -m pip install ./examples/lichhook-aider``), or copy this file into the plugin
folder; then ``python3 lichhook.pyz adapters`` lists it and ``python3 lichhook.pyz aider``
reports with it.
"""

from lichhook import Adapter, hookimpl


class Aider(Adapter):
    provider = "aider"
    # What the hook prints on stdout for the harness; most harnesses want nothing.
    verdict = ""
    # A realistic payload: `lichhook demo` sends it through the real report path.
    sample = {"event": "chat_started", "chat": {"id": "c0ffee00-1234-4abc-8def-0123456789ab"}}

    def session_id(self, payload, environ):
        chat = payload.get("chat")
        if isinstance(chat, dict) and isinstance(chat.get("id"), str):
            return chat["id"]
        return None  # nothing to report for this payload


@hookimpl
def lichhook_adapters():
    return [Aider()]
