"""Tool worlds served to agents over MCP, and agents under test behind an endpoint."""
