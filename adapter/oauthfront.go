package adapter

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/restmcp/restmcp/metering"
)

// sourceOAuth is the credential source of an API key that an OAuth access
// token stands for.
const sourceOAuth = "oauth"

// noOAuthRegistration answers client registration when there is no OAuth
// front: at /register (where the MCP TypeScript SDK registers when a
// server publishes no authorization server metadata) and at
// /oauth/register. An OAuth-capable client that got a 401 for a missing
// or refused key lands here, and the RFC 7591 §3.2.2 error it gets says
// how to send the key; the SDKs show error_description (or the body) to
// the user. The text avoids the words "Unauthorized", "Not Found" and the
// numbers 404 and 405, which make mcp-remote sign in again or switch
// transports instead of stopping.
func (s *Server) noOAuthRegistration(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	abortJSON(c, http.StatusBadRequest, gin.H{
		"error": "invalid_client_metadata",
		"error_description": "this MCP server takes an API key, not an OAuth sign-in: set your API key in your MCP client's configuration, " +
			"as the x-api-key header, as ?api_key=YOUR_KEY on the MCP URL (" + s.opts.MCPPath + "), or as Authorization: Bearer YOUR_KEY",
	})
}

// VerifyKey checks an API key with one upstream call of the named tool,
// made without arguments: a 2xx answer accepts the key, 401 or 403
// refuses it (metering.ErrUnknownKey), anything else is an error (the
// check could not be made). It is the OAuth sign-in's key check when keys
// are not in a registry (key_mode open). The call is not metered.
func (s *Server) VerifyKey(ctx context.Context, tool, key string) error {
	t := s.table.Load().tools[tool]
	if t == nil {
		return fmt.Errorf("no tool %q to verify keys with", tool)
	}
	if s.opts.UpstreamTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.UpstreamTimeout)
		defer cancel()
	}
	req, err := t.NewRequestPresented(withUpstreamCaller(ctx, key), []byte("{}"), key, "")
	if err != nil {
		return fmt.Errorf("building the verify request for %s: %s", tool, redact(err.Error(), key))
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", s.userAgent)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("verify call %s: %s", tool, redact(err.Error(), key))
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		return nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: the upstream API answered %d to %s", metering.ErrUnknownKey, resp.StatusCode, tool)
	}
	return fmt.Errorf("verify call %s: the upstream API answered %d", tool, resp.StatusCode)
}

// HasTool reports whether the server serves a tool of that name.
func (s *Server) HasTool(name string) bool { return s.table.Load().tools[name] != nil }

// OAuthURL is the OAuth MCP endpoint's URL, the one to paste into Claude
// or ChatGPT; "" without Options.OAuth.
func (s *Server) OAuthURL() string {
	if s.opts.OAuth == nil {
		return ""
	}
	return s.opts.OAuth.Resource()
}
