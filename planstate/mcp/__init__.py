"""The MCP server: `planstate mcp`, the Workspace API as tools for agents over stdio (docs/mcp.md)."""
