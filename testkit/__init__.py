"""What the tests and the benchmark share, in one place.

- ``testkit.constants``: the checkout's paths and the values every test agrees on;
- ``testkit.environment``: the clean environment a hook runs in, and the ``LICH_*`` values;
- ``testkit.archive``: building ``lichhook.pyz`` and running it as a harness would;
- ``testkit.servers``: lich's stand-in, a misbehaving loopback server, a free port;
- ``testkit.hostile``: the hostile-input corpora (ids, fragments) several tests feed in;
- ``testkit.waits``: reading and checking a waits folder;
- ``testkit.windows``: how Windows programs split a command line;
- ``testkit.models``: fake model servers (Anthropic Messages, OpenAI Responses, chat completions);
- ``testkit.harnesses``: the pinned harness CLIs, installed once, run headless in a throw-away home.

Nothing here runs on import; each module imports what it needs when used.
"""
