"""``lichhook mcp``: the claude_code_wait tool served over MCP's stdio transport.

``server`` speaks JSON-RPC 2.0, one message per line; ``tool`` describes the tool and runs
it through ``lichhook.waits.api.run_op``, the same code as ``lichhook wait``.
"""
