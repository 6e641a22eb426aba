"""The reference calculators as tools for agents: transport-free tool logic and the MCP server."""
