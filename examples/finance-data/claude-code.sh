#!/bin/sh
# Adds the finance-data example to Claude Code, with the basic plan's key.
claude mcp add --transport http finance-data http://127.0.0.1:8080/mcp --header "x-api-key: demo-basic-key"
