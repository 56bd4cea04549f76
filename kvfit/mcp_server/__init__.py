"""`kvfit mcp`: kvfit's plan served to agents over the Model Context Protocol (stdio).

Every tool is a view of the public API's one report (kvfit.api): the structured content is
the JSON the CLI's --json prints and the text is kvfit.report.answer's paragraph. `tools`
holds the tool table (no SDK needed); `server` puts it on the official MCP SDK (the `mcp`
extra).
"""
