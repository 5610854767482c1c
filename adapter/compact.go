package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/restmcp/restmcp/internal/clip"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/internal/textsearch"
	"github.com/restmcp/restmcp/openapi"
)

// The tools of compact mode (Options.Compact).
const (
	toolSearchOperations  = "search_operations"
	toolDescribeOperation = "describe_operation"
	toolCallOperation     = "call_operation"
)

// Search defaults and bounds.
const (
	defaultSearchLimit = 10
	maxSearchLimit     = 50
)

// compactTools is the catalogue behind the three compact-mode tools: every
// operation's tool in name order and a BM25F index over them (field
// weights: the tool name, which holds the operationId's words, 3; the
// summary 2; the tags and the path 1.5; the description 1; parameter names
// 0.5).
type compactTools struct {
	ops   []*openapi.Tool
	index *textsearch.Index
}

func newCompactTools(tools map[string]*openapi.Tool) *compactTools {
	c := &compactTools{index: textsearch.New()}
	for _, t := range tools {
		c.ops = append(c.ops, t)
	}
	sort.Slice(c.ops, func(i, j int) bool { return c.ops[i].Name < c.ops[j].Name })
	for _, t := range c.ops {
		c.index.Add(
			textsearch.Field{Text: t.Name, Weight: 3}, // the operationId's words, once
			textsearch.Field{Text: t.Title, Weight: 2},
			textsearch.Field{Text: strings.Join(t.Tags, " ") + " " + t.PathTemplate, Weight: 1.5},
			textsearch.Field{Text: t.Description, Weight: 1},
			textsearch.Field{Text: strings.Join(parameterNames(t.InputSchema), " "), Weight: 0.5},
		)
	}
	return c
}

// parameterNames are the top-level property names of an input schema.
func parameterNames(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// compactListed are the three tools compact mode lists.
func compactListed() []*mcp.Tool {
	schema := func(s string) json.RawMessage { return json.RawMessage(s) }
	yes := true
	return []*mcp.Tool{
		{
			Name:        toolCallOperation,
			Title:       "Call an operation",
			Description: "Call one operation of the API by name, with its arguments (see describe_operation for their schema). The call is sent to the API with your credentials and counts against your plan like a direct call.",
			InputSchema: schema(`{"type":"object","properties":{"name":{"type":"string","description":"The operation's name, as search_operations gives it."},"arguments":{"type":"object","description":"The operation's arguments, matching its input schema."}},"required":["name"],"additionalProperties":false}`),
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: &yes},
		},
		{
			Name:        toolDescribeOperation,
			Title:       "Describe an operation",
			Description: "The full description and input schema of one operation, to call it with call_operation.",
			InputSchema: schema(`{"type":"object","properties":{"name":{"type":"string","description":"The operation's name, as search_operations gives it."}},"required":["name"],"additionalProperties":false}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		},
		{
			Name:        toolSearchOperations,
			Title:       "Search the API's operations",
			Description: "Find the operations of the API that fit a task, best first: each with its name, method, path and one-line description. Then describe_operation gives one's arguments and call_operation calls it.",
			InputSchema: schema(`{"type":"object","properties":{"query":{"type":"string","description":"Words describing the task, e.g. \"list the pods in a namespace\"."},"tag":{"type":"string","description":"Only operations with this tag."},"limit":{"type":"integer","minimum":1,"maximum":50,"default":10,"description":"How many operations to return."}},"required":["query"],"additionalProperties":false}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		},
	}
}

// innerCall is the operation call inside a call_operation, as the gate
// read it: the name and raw arguments, or why they could not be read.
type innerCall struct {
	name      string
	arguments json.RawMessage
	problem   string // non-empty: the call is answered with this error
}

// readInnerCall reads call_operation's arguments, refusing the ambiguity
// the gate refuses elsewhere (H2): a member given twice, a name that is not
// a string, arguments that are not an object, unknown members.
func readInnerCall(raw json.RawMessage) *innerCall {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return &innerCall{problem: "call_operation needs its arguments as an object: {\"name\": \"<operation>\", \"arguments\": {…}}"}
	}
	in := &innerCall{}
	var name []byte
	err := members(raw, []string{"name", "arguments"}, "arguments.", func(member string, value []byte) error {
		switch member {
		case "name":
			name = value
		case "arguments":
			in.arguments = value
		default:
			return invalidRequest("call_operation takes name and arguments; unknown member %q", clip.String(member, 64))
		}
		return nil
	})
	switch {
	case err != nil:
		in.problem = err.Error()
	case name == nil || name[0] != '"':
		in.problem = "call_operation needs name, the operation's name as a string (search_operations finds it)"
	case in.arguments != nil && in.arguments[0] != '{' && string(in.arguments) != "null":
		in.problem = "call_operation's arguments must be an object, the operation's arguments"
	default:
		in.name = jsonString(name)
	}
	return in
}

// compactHandlers are the handlers of the three compact-mode tools.
func (s *Server) compactHandlers() map[string]mcp.ToolHandler {
	return map[string]mcp.ToolHandler{
		toolSearchOperations:  s.searchOperations,
		toolDescribeOperation: s.describeOperation,
		toolCallOperation:     s.callOperation,
	}
}

// callOperation runs the operation the gate read from call_operation's
// arguments (never a second reading of them), through the operation's own
// tool handler: the same admission, request building, credentials and
// result mapping as a direct call.
func (s *Server) callOperation(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	in := exchangeFrom(ctx).inner
	switch {
	case in == nil:
		return errorResult("internal error: call_operation was not read by the gate; it was not run"), nil
	case in.problem != "":
		return errorResult(in.problem), nil
	}
	h, ok := s.tableFor(ctx).opHandlers[in.name]
	if !ok {
		return errorResult("unknown operation " + fmt.Sprintf("%q", clip.String(in.name, 64)) + ": search_operations finds the operations and their names"), nil
	}
	return h(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: in.name, Arguments: in.arguments}})
}

// searchOperations answers search_operations: the best matches of the
// query among the operations the caller's plan allows (all of them
// without a key).
func (s *Server) searchOperations(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Query string `json:"query"`
		Tag   string `json:"tag"`
		Limit int    `json:"limit"`
	}
	if msg := decodeToolArgs(req, &args); msg != "" {
		return errorResult("search_operations: " + msg), nil
	}
	if strings.TrimSpace(args.Query) == "" {
		return errorResult("search_operations needs query: words describing the task"), nil
	}
	if args.Limit == 0 {
		args.Limit = defaultSearchLimit
	}
	if args.Limit < 1 || args.Limit > maxSearchLimit {
		return errorResult(fmt.Sprintf("search_operations: limit must be 1 to %d", maxSearchLimit)), nil
	}
	plan := exchangeFrom(ctx).catalogPlan
	compact := s.tableFor(ctx).compact
	hits := compact.index.Search(args.Query, func(i int) bool {
		t := compact.ops[i]
		if args.Tag != "" && !hasTag(t.Tags, args.Tag) {
			return false
		}
		return plan == nil || plan.Allows(t.Name, t.Tags)
	}, args.Limit)
	type found struct {
		Name        string `json:"name"`
		API         string `json:"api,omitempty"` // several APIs on one endpoint (openapi.Tool.API)
		Method      string `json:"method"`
		Path        string `json:"path"`
		Description string `json:"description,omitempty"`
	}
	out := struct {
		Operations []found `json:"operations"`
	}{Operations: []found{}}
	for _, h := range hits {
		t := compact.ops[h.Doc]
		out.Operations = append(out.Operations, found{t.Name, t.API, t.Method, t.PathTemplate, oneLine(t)})
	}
	return jsonResult(out)
}

// describeOperation answers describe_operation: one operation's full
// description and schemas, if the caller's plan allows it.
func (s *Server) describeOperation(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Name string `json:"name"`
	}
	if msg := decodeToolArgs(req, &args); msg != "" {
		return errorResult("describe_operation: " + msg), nil
	}
	t := s.tableFor(ctx).tools[args.Name]
	if t == nil {
		return errorResult(fmt.Sprintf("unknown operation %q: search_operations finds the operations and their names", clip.String(args.Name, 64))), nil
	}
	if plan := exchangeFrom(ctx).catalogPlan; plan != nil && !plan.Allows(t.Name, t.Tags) {
		return errorResult(plan.DeniedMessage(t.Name)), nil
	}
	out := struct {
		Name         string          `json:"name"`
		API          string          `json:"api,omitempty"`
		Method       string          `json:"method"`
		Path         string          `json:"path"`
		Title        string          `json:"title,omitempty"`
		Description  string          `json:"description,omitempty"`
		Tags         []string        `json:"tags,omitempty"`
		ReadOnly     bool            `json:"read_only"`
		Destructive  bool            `json:"destructive"`
		InputSchema  json.RawMessage `json:"input_schema"`
		OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	}{t.Name, t.API, t.Method, t.PathTemplate, t.Title, t.Description, t.Tags, t.ReadOnly, t.Destructive, t.InputSchema, t.OutputSchema}
	return jsonResult(out)
}

// decodeToolArgs decodes a meta tool's arguments into v, refusing unknown
// members; it returns what is wrong, or "".
func decodeToolArgs(req *mcp.CallToolRequest, v any) string {
	var raw json.RawMessage
	if req.Params != nil {
		raw = req.Params.Arguments
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return "invalid arguments: " + err.Error()
	}
	return ""
}

// jsonResult is a result whose text is v as JSON and whose
// structuredContent is v.
func jsonResult(v any) (*mcp.CallToolResult, error) {
	b, err := sdkJSON(v)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
}

func hasTag(tags []string, tag string) bool {
	for _, t := range tags {
		if strings.EqualFold(t, tag) {
			return true
		}
	}
	return false
}

// oneLine is an operation's one-line description: its summary, or the
// first sentence of its description without HTML tags, at most 160
// characters.
func oneLine(t *openapi.Tool) string {
	s := t.Title
	if s == "" {
		s = stripTags(t.Description)
		if i := strings.IndexAny(s, "\n"); i >= 0 {
			s = s[:i]
		}
		if i := strings.Index(s, ". "); i >= 0 {
			s = s[:i+1]
		}
	}
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 160 {
		s = string(r[:159]) + "…"
	}
	return s
}

// catalogue reads the plan of a search_operations or describe_operation
// caller (these are catalogue reads, like tools/list: never metered, a key
// optional): with a key that resolves, only the plan's operations are
// found; without one, or with one that does not resolve, every operation.
func (s *Server) catalogue(ctx context.Context, ex *exchange) {
	if s.opts.Keys == nil || ex.cred.key == "" {
		return
	}
	if plan, ok := s.listPlan(ctx, ex.cred); ok {
		ex.catalogPlan = plan
	}
}

// stripTags drops what lies between < and > (descriptions written in HTML,
// as Stripe's are).
func stripTags(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}
