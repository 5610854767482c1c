package adapter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource serves a GET operation's answer as an MCP resource (MCP
// 2025-11-25 §Resources,
// https://modelcontextprotocol.io/specification/2025-11-25/server/resources):
// resources/read of URI is a call of Tool without arguments, admitted,
// metered and sent exactly as that tools/call would be, and its JSON body
// is the resource's text.
type Resource struct {
	URI  string // e.g. bankscope://v1/metrics
	Tool string // a GET operation's tool that needs no arguments
}

// checkResources reports every resource that cannot be served from tbl.
func checkResources(rs []Resource, tbl *toolTable) []error {
	var errs []error
	seen := map[string]bool{}
	for _, r := range rs {
		t := tbl.tools[r.Tool]
		switch {
		case r.URI == "" || !strings.Contains(r.URI, ":"):
			errs = append(errs, fmt.Errorf("Resources: %q is not a URI", r.URI))
		case seen[r.URI]:
			errs = append(errs, fmt.Errorf("Resources: %q is given twice", r.URI))
		case t == nil:
			errs = append(errs, fmt.Errorf("Resources: %s: no tool %q", r.URI, r.Tool))
		case t.Method != http.MethodGet:
			errs = append(errs, fmt.Errorf("Resources: %s: %s is %s, not GET", r.URI, r.Tool, t.Method))
		case requiresArguments(t.InputSchema):
			errs = append(errs, fmt.Errorf("Resources: %s: %s needs arguments; a resource is read without any", r.URI, r.Tool))
		}
		seen[r.URI] = true
	}
	return errs
}

func requiresArguments(schema json.RawMessage) bool {
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	return len(s.Required) > 0
}

// addResources registers Options.Resources with the MCP server.
func (s *Server) addResources() {
	tbl := s.table.Load()
	for _, r := range s.opts.Resources {
		t := tbl.tools[r.Tool]
		s.mcp.AddResource(&mcp.Resource{
			URI: r.URI, Name: r.Tool, Title: t.Title, Description: firstLine(t.Description), MIMEType: "application/json",
		}, s.readResource(r))
	}
}

// resourceTool is the tool a resources/read of uri calls, or "".
func (s *Server) resourceTool(uri string) string {
	if l, ok := s.readLink(uri); ok {
		return l.Tool
	}
	for _, r := range s.opts.Resources {
		if r.URI == uri {
			return r.Tool
		}
	}
	return ""
}

// gateResource admits a resources/read as a call of its tool: the caller
// authenticated, the plan gate, the meter. Other reads (an unknown URI)
// pass, for the SDK to answer.
func (s *Server) gateResource(c *gin.Context, ex *exchange) {
	tool := ex.table.tools[s.resourceTool(ex.msg.uri)]
	if tool == nil {
		c.Next()
		return
	}
	s.admitAndRun(c, ex, tool, &admission{start: time.Now()})
}

// readResource answers resources/read of r by running its tool's handler
// without arguments; an error result becomes a JSON-RPC error naming it.
func (s *Server) readResource(r Resource) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		h := s.tableFor(ctx).opHandlers[r.Tool]
		if h == nil {
			return nil, &jsonrpc.Error{Code: codeInternalError, Message: "resource " + r.URI + ": its operation " + r.Tool + " is no longer served"}
		}
		res, err := h(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: r.Tool, Arguments: json.RawMessage("{}")}})
		if err != nil {
			return nil, err
		}
		var text string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		if res.IsError {
			return nil, &jsonrpc.Error{Code: codeInternalError, Message: "resource " + r.URI + ": " + text}
		}
		if s.opts.TextReceipt && res.StructuredContent != nil {
			// The text is a receipt (Options.TextReceipt); the resource is
			// the object itself.
			b, err := sdkJSON(res.StructuredContent)
			if err != nil {
				return nil, err
			}
			text = string(b)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.URI, MIMEType: "application/json", Text: text}}}, nil
	}
}

// capabilities are the server's MCP capabilities: tools (listChanged only
// with sessions, whose streams carry the notification), and resources
// only when some are configured.
func capabilities(o Options) *mcp.ServerCapabilities {
	// listChanged only where a change can come and be heard: a watched
	// document, and a session stream to hear it on.
	c := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: o.Sessions != nil && o.Watched}}
	if len(o.Resources) > 0 || o.BinaryLinkBytes > 0 {
		c.Resources = &mcp.ResourceCapabilities{}
	}
	if o.Tasks != nil && o.AsyncWait > 0 {
		// SEP-2663 "Capability Negotiation": no settings, an empty object.
		c.Extensions = map[string]any{extTasks: map[string]any{}}
	}
	return c
}
