package adapter

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// Discovery documents: what a person or an agent reads before connecting.
// Each is built once per tool table and served from memory.

// serverCard is GET /.well-known/mcp: the server's name and version, its
// endpoints and transports, how callers authenticate, and its tools by name
// and description. Unauthenticated, never metered.
type serverCard struct {
	Name        string       `json:"name"`
	Version     string       `json:"version"`
	Description string       `json:"description,omitempty"`
	Endpoints   []cardURL    `json:"endpoints"`
	Auth        []string     `json:"authentication"`
	Tools       []cardTool   `json:"tools"`
	Protocol    cardProtocol `json:"protocol"`
}

type cardURL struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
	Auth      string `json:"auth"`
}

type cardTool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type cardProtocol struct {
	Versions []string `json:"versions"`
	Sessions bool     `json:"sessions"`
}

// baseURL is the origin clients reach: Options.PublicURL's, else this
// request's (http, its Host).
func (s *Server) baseURL(c *gin.Context) string {
	if u := s.opts.PublicURL; u != "" {
		if i := strings.Index(u, "://"); i > 0 {
			if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
				return u[:i+3+j]
			}
		}
		return strings.TrimSuffix(u, "/")
	}
	return "http://" + c.Request.Host
}

func (s *Server) serveCard(c *gin.Context) {
	tbl := s.table.Load()
	base := s.baseURL(c)
	card := serverCard{
		Name: s.opts.Name, Version: s.opts.Version, Description: firstLine(s.opts.Instructions),
		Endpoints: []cardURL{{URL: base + s.opts.MCPPath, Transport: "streamable-http", Auth: "api-key"}},
		Auth:      []string{"x-api-key header", "api_key query parameter", "Authorization: Bearer <API key>"},
		Tools:     []cardTool{},
		Protocol:  cardProtocol{Versions: s.versions, Sessions: s.opts.Sessions != nil},
	}
	if s.opts.AllowAnonymous {
		card.Auth = append(card.Auth, "none (calls without a key are allowed)")
	}
	if s.opts.OAuth != nil {
		card.Endpoints = append(card.Endpoints, cardURL{URL: s.opts.OAuth.Resource(), Transport: "streamable-http", Auth: "oauth2"})
		card.Auth = append(card.Auth, "OAuth 2.1 (sign in with the API key)")
	}
	for _, t := range tbl.listed {
		card.Tools = append(card.Tools, cardTool{Name: t.Name, Description: firstLine(t.Description)})
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.Header("Access-Control-Allow-Origin", "*")
	c.PureJSON(http.StatusOK, card)
}

// serveLLMsTxt is GET /llms.txt (https://llmstxt.org/): the endpoint, the
// authentication rule and every tool with its one-line description, in
// Markdown.
func (s *Server) serveLLMsTxt(c *gin.Context) {
	tbl := s.table.Load()
	var b strings.Builder
	s.writeEndpointIntro(&b, c)
	fmt.Fprintf(&b, "\n## Tools (%d)\n\n", len(tbl.listed))
	for _, t := range tbl.listed {
		if d := firstLine(t.Description); d != "" {
			fmt.Fprintf(&b, "- `%s`: %s\n", t.Name, d)
		} else {
			fmt.Fprintf(&b, "- `%s`\n", t.Name)
		}
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "text/markdown; charset=utf-8", []byte(b.String()))
}

// writeEndpointIntro writes what /llms.txt and the Markdown page begin
// with: the server's name, its first paragraph of instructions, the MCP
// URL and how to authenticate.
func (s *Server) writeEndpointIntro(b *strings.Builder, c *gin.Context) {
	fmt.Fprintf(b, "# %s\n\n", s.opts.Name)
	if d := firstLine(s.opts.Instructions); d != "" {
		fmt.Fprintf(b, "> %s\n\n", d)
	}
	fmt.Fprintf(b, "MCP endpoint (Streamable HTTP): %s%s\n\n", s.baseURL(c), s.opts.MCPPath)
	b.WriteString("## Authentication\n\n")
	b.WriteString("Send your API key in the `x-api-key` header, as `?api_key=<key>` on the MCP URL, or as `Authorization: Bearer <key>`. `initialize` and `tools/list` need no key; each `tools/call` is metered against your key's plan.\n")
	if s.opts.OAuth != nil {
		fmt.Fprintf(b, "Clients that cannot send a key (Claude and ChatGPT connectors) connect to %s and sign in with the key.\n", s.opts.OAuth.Resource())
	}
}

// serveMarkdownPage is GET Options.MarkdownPage: a page of the endpoint for
// agents, in Markdown: /llms.txt's introduction, then each tool with its
// whole description and its arguments (name, type, whether required, the
// first line of its description), from the input schema clients list.
func (s *Server) serveMarkdownPage(c *gin.Context) {
	tbl := s.table.Load()
	var b strings.Builder
	s.writeEndpointIntro(&b, c)
	b.WriteString("\n## Calling a tool\n\n")
	fmt.Fprintf(&b, "POST a JSON-RPC 2.0 `tools/call` to the endpoint with `Content-Type: application/json` and `Accept: application/json, text/event-stream`:\n\n")
	b.WriteString("```json\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"<tool>\",\"arguments\":{}}}\n```\n")
	fmt.Fprintf(&b, "\n## Tools (%d)\n", len(tbl.listed))
	for _, t := range tbl.listed {
		fmt.Fprintf(&b, "\n### `%s`\n\n", t.Name)
		if d := strings.TrimSpace(t.Description); d != "" {
			b.WriteString(d + "\n\n")
		}
		var schema struct {
			Properties map[string]struct {
				Type        any    `json:"type"`
				Description string `json:"description"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		raw, _ := json.Marshal(t.InputSchema) // a json.RawMessage or a value
		_ = json.Unmarshal(raw, &schema)
		if len(schema.Properties) == 0 {
			b.WriteString("Arguments: none.\n")
			continue
		}
		b.WriteString("Arguments:\n\n")
		for _, name := range slices.Sorted(maps.Keys(schema.Properties)) {
			p := schema.Properties[name]
			typ, _ := p.Type.(string)
			if typ == "" {
				typ = "any"
			}
			req := "optional"
			if slices.Contains(schema.Required, name) {
				req = "required"
			}
			fmt.Fprintf(&b, "- `%s` (%s, %s)", name, typ, req)
			if d := firstLine(p.Description); d != "" {
				b.WriteString(": " + d)
			}
			b.WriteString("\n")
		}
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "text/markdown; charset=utf-8", []byte(b.String()))
}

// serveDocument is GET /openapi.json: the OpenAPI document served
// (Options.Document).
func (s *Server) serveDocument(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "application/json", *s.document.Load())
}

// SetDocument replaces what GET /openapi.json serves (after a reload); it
// does nothing when the server was built without Options.Document.
func (s *Server) SetDocument(b []byte) {
	if s.opts.Document != nil && b != nil {
		s.document.Store(&b)
	}
}

// firstLine is the first paragraph of s on one line, at most 200
// characters.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "\n\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}

// metaKeyTiming is the _meta member of a tools/call result holding its
// timing (Options.TimingMeta).
const metaKeyTiming = "io.restmcp/timing"

// timingWriter adds Server-Timing (https://www.w3.org/TR/server-timing/)
// to a tools/call response as its header is written: the time spent in
// the meter (key lookup and admission), upstream, and in all.
type timingWriter struct {
	gin.ResponseWriter
	ex      *exchange
	start   time.Time
	written bool
}

func (w *timingWriter) setTiming() {
	if w.written {
		return
	}
	w.written = true
	r := w.ex.call
	var buf [96]byte
	v := append(buf[:0], "meter;dur="...)
	v = strconv.AppendFloat(v, milliseconds(r.meter), 'f', 3, 64)
	v = append(v, ", upstream;dur="...)
	v = strconv.AppendFloat(v, milliseconds(r.upstream), 'f', 3, 64)
	v = append(v, ", total;dur="...)
	v = strconv.AppendFloat(v, milliseconds(time.Since(w.start)), 'f', 3, 64)
	w.Header()["Server-Timing"] = []string{string(v)}
}

func (w *timingWriter) WriteHeader(code int) { w.setTiming(); w.ResponseWriter.WriteHeader(code) }
func (w *timingWriter) Write(b []byte) (int, error) {
	w.setTiming()
	return w.ResponseWriter.Write(b)
}
func (w *timingWriter) WriteString(s string) (int, error) {
	w.setTiming()
	return w.ResponseWriter.WriteString(s)
}
func (w *timingWriter) WriteHeaderNow() { w.setTiming(); w.ResponseWriter.WriteHeaderNow() }
