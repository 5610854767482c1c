package adapter

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/restmcp/restmcp/internal/clip"
)

// MCP Server Cards (SEP-2127, https://github.com/modelcontextprotocol/modelcontextprotocol/pull/2127;
// schema: https://github.com/modelcontextprotocol/experimental-ext-server-card/blob/main/schema.ts):
// what a registry or client reads before connecting. restmcp serves its
// card at <endpoint>/server-card for each MCP endpoint (the location the
// SEP reserves) and at /.well-known/mcp/server-card.json, and an MCP
// Catalog naming it at /.well-known/mcp/catalog.json. Unauthenticated,
// never metered; public metadata only.

const (
	// cardSchema is the $schema every card carries.
	cardSchema = "https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json"
	// cardMediaType is the card's media type (SEP-2127 discovery).
	cardMediaType = "application/mcp-server-card+json"
	// cardSuffix is appended to an endpoint's path for its card.
	cardSuffix = "/server-card"
)

// sepCard is a Server Card: identity, remotes, and restmcp's own
// metadata under _meta.
type sepCard struct {
	Schema      string         `json:"$schema"`
	Name        string         `json:"name"`
	Version     string         `json:"version"`
	Description string         `json:"description"`
	Title       string         `json:"title,omitempty"`
	Remotes     []cardRemote   `json:"remotes"`
	Meta        map[string]any `json:"_meta"`
}

// cardRemote is one endpoint a client may connect to.
type cardRemote struct {
	Type                      string       `json:"type"` // streamable-http or sse
	URL                       string       `json:"url"`
	Headers                   []cardHeader `json:"headers,omitempty"`
	SupportedProtocolVersions []string     `json:"supportedProtocolVersions"`
}

// cardHeader is a header a client sends on a remote (KeyValueInput).
type cardHeader struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	IsRequired  bool   `json:"isRequired"`
	IsSecret    bool   `json:"isSecret"`
}

// cardName is the card's reverse-DNS name, "<namespace>/<server>": the
// host clients reach reversed (mcp.example.com → com.example.mcp; "local"
// for an IP address or a single label such as localhost), a slash, and the
// server's name in lower case with other characters than a-z 0-9 . _ -
// as "-" ("Bancadia MCP" → bancadia-mcp).
func cardName(base, server string) string {
	host := strings.TrimPrefix(strings.TrimPrefix(base, "https://"), "http://")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ns := "local"
	if labels := strings.Split(strings.ToLower(host), "."); len(labels) > 1 && net.ParseIP(strings.Trim(host, "[]")) == nil {
		for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
			labels[i], labels[j] = labels[j], labels[i]
		}
		ns = strings.Join(labels, ".")
	}
	var b strings.Builder
	for _, r := range strings.ToLower(server) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	slug := strings.Trim(b.String(), "-.")
	if slug == "" {
		slug = "mcp"
	}
	return clip.String(ns, 99) + "/" + clip.String(slug, 100)
}

// card builds the Server Card as a client reaching base sees it.
func (s *Server) card(base string) sepCard {
	title := s.opts.Name
	if title == "" {
		title = "restmcp"
	}
	desc := firstLine(s.opts.Instructions)
	if desc == "" {
		desc = title + ": the operations of a REST API as MCP tools"
	}
	keyHeader := []cardHeader{{Name: "X-Api-Key", IsRequired: !s.opts.AllowAnonymous, IsSecret: true,
		Description: "Your API key; also accepted as Authorization: Bearer <key>, or as ?api_key=<key> on the URL"}}
	if s.opts.PublicMode {
		keyHeader = nil // every credential is ignored
	}
	remotes := []cardRemote{{Type: "streamable-http", URL: base + s.opts.MCPPath, Headers: keyHeader, SupportedProtocolVersions: s.versions}}
	meta := map[string]any{"io.restmcp/tools": len(s.table.Load().listed)}
	if s.opts.OAuth != nil {
		remotes = append(remotes, cardRemote{Type: "streamable-http", URL: s.opts.OAuth.Resource(), SupportedProtocolVersions: s.versions})
		meta["io.restmcp/oauth-protected-resource"] = s.opts.OAuth.ResourceMetadataURL()
	}
	if p := s.opts.LegacySSEPath; p != "" {
		remotes = append(remotes, cardRemote{Type: "sse", URL: base + p, Headers: keyHeader, SupportedProtocolVersions: []string{"2024-11-05"}})
	}
	return sepCard{Schema: cardSchema, Name: cardName(base, title), Version: s.opts.Version, Description: clip.String(desc, 100),
		Title: clip.String(title, 100), Remotes: remotes, Meta: meta}
}

// serveServerCard answers GET <endpoint>/server-card and
// /.well-known/mcp/server-card.json with the card (its media type, CORS
// and caching as SEP-2127's discovery asks, a strong ETag and 304 for
// If-None-Match).
func (s *Server) serveServerCard(c *gin.Context) {
	b, err := sdkJSON(s.card(s.baseURL(c)))
	if err != nil {
		c.Status(http.StatusInternalServerError)
		return
	}
	sum := sha256.Sum256(b)
	discoveryHeaders(c, `"`+hex.EncodeToString(sum[:16])+`"`)
	if c.GetHeader("If-None-Match") == c.Writer.Header().Get("ETag") {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, cardMediaType, b)
}

// serveCatalog answers GET /.well-known/mcp/catalog.json: an MCP Catalog
// with one entry, this server's card.
func (s *Server) serveCatalog(c *gin.Context) {
	base := s.baseURL(c)
	card := s.card(base)
	host := strings.TrimPrefix(strings.TrimPrefix(base, "https://"), "http://")
	_, server, _ := strings.Cut(card.Name, "/")
	b, err := sdkJSON(map[string]any{"specVersion": "draft", "entries": []map[string]string{{
		"identifier": "urn:air:" + host + ":" + server, "displayName": card.Title, "type": cardMediaType,
		"url": base + strings.TrimSuffix(s.opts.MCPPath, "/") + cardSuffix,
	}}})
	if err != nil {
		c.Status(http.StatusInternalServerError)
		return
	}
	discoveryHeaders(c, "")
	c.Data(http.StatusOK, "application/json", b)
}

// discoveryHeaders sets what SEP-2127 asks of discovery documents: CORS
// for any origin, GET only, and an hour of caching.
func discoveryHeaders(c *gin.Context, etag string) {
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "GET")
	h.Set("Access-Control-Allow-Headers", "Content-Type")
	h.Set("Cache-Control", "public, max-age=3600")
	if etag != "" {
		h.Set("ETag", etag)
	}
}
