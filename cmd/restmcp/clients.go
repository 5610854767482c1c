package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/restmcp/restmcp/internal/loopback"
)

// clientName is the name client configurations give the server: the API's
// title in lower case with runs of other characters as "-" (at most 40),
// so that two APIs configured side by side do not collide.
func clientName(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			if b.Len() >= 40 {
				break
			}
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "restmcp"
	}
	return b.String()
}

// writeClientConfigs writes ready-to-paste configurations of the MCP server
// at mcpURL, named after the API, for the clients people run: Claude Code,
// Cursor, VS Code, Claude Desktop (through mcp-remote), the MCP Inspector
// CLI, and the URL for Claude and ChatGPT connectors: oauthURL, the OAuth
// MCP endpoint, or "" when the OAuth front is off. key is the placeholder or
// demo key. A loopback URL is said to be unreachable from cloud connectors.
func writeClientConfigs(w io.Writer, mcpURL, oauthURL, title, key string) {
	name := clientName(title)
	js := func(v any) string {
		b, _ := json.MarshalIndent(v, "", "  ")
		return string(b)
	}
	hdr := map[string]string{"x-api-key": key}
	var b strings.Builder
	fmt.Fprintf(&b, "Claude Code:\n  claude mcp add --transport http %s %s --header \"x-api-key: %s\"\n\n", name, mcpURL, key)
	fmt.Fprintf(&b, "Cursor (~/.cursor/mcp.json):\n%s\n\n", js(map[string]any{"mcpServers": map[string]any{name: map[string]any{"url": mcpURL, "headers": hdr}}}))
	fmt.Fprintf(&b, "VS Code (.vscode/mcp.json):\n%s\n\n", js(map[string]any{"servers": map[string]any{name: map[string]any{"type": "http", "url": mcpURL, "headers": hdr}}}))
	fmt.Fprintf(&b, "Claude Desktop (claude_desktop_config.json, through mcp-remote):\n%s\n\n", js(map[string]any{"mcpServers": map[string]any{name: map[string]any{
		"command": "npx", "args": []string{"-y", "mcp-remote", mcpURL, "--header", "x-api-key:${API_KEY}"}, "env": map[string]string{"API_KEY": key}}}}))
	fmt.Fprintf(&b, "MCP Inspector (CLI):\n  npx @modelcontextprotocol/inspector --cli %s --transport http --header \"x-api-key: %s\" --method tools/list\n\n", mcpURL, key)
	connector := oauthURL
	if oauthURL != "" {
		b.WriteString("Claude and ChatGPT custom connectors (paste the URL; the user signs in with the API key):\n")
		fmt.Fprintf(&b, "  %s\n", oauthURL)
	} else {
		connector = mcpURL
		b.WriteString("Connectors that take only a URL:\n")
		fmt.Fprintf(&b, "  %s?api_key=%s\n", mcpURL, url.QueryEscape(key))
	}
	if u, err := url.Parse(connector); err == nil && loopback.Host(u.Hostname()) {
		b.WriteString("  (a loopback address: cloud connectors cannot reach it; set public_url, RESTMCP_PUBLIC_URL, to the address the internet reaches)\n")
	}
	if oauthURL == "" {
		b.WriteString("  (Claude and ChatGPT connectors send no API key in headers, and Claude's take no ?api_key=: serve them with oauth: true, RESTMCP_OAUTH=true, and paste the OAuth MCP URL it prints.)\n")
	}
	_, _ = io.WriteString(w, b.String())
}

// runClients prints the client configurations for the configured document
// and public_url (or the address serve would listen on).
func runClients(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	doc, cfg, err := loadForInspection(ctx, args, getenv, stderr)
	if err != nil {
		return err
	}
	mcpURL := cfg.PublicURL
	if mcpURL == "" {
		mcpURL = "http://" + cfg.Addr + cfg.MCPPath
	}
	oauthURL := ""
	if cfg.OAuth {
		issuer, err := oauthIssuer(cfg.PublicURL, cfg.Addr)
		if err != nil {
			return err
		}
		oauthURL = issuer + cfg.OAuthMCPPath
	}
	writeClientConfigs(stdout, mcpURL, oauthURL, doc.Title, "YOUR_API_KEY")
	return nil
}
