package openapi

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Default thresholds of the startup report. Clients slow down, truncate or
// refuse tool lists past roughly these sizes, and every listed tool costs
// context tokens on every model turn.
const (
	DefaultReportMaxTools     = 128
	DefaultReportMaxListBytes = 256 << 10
)

// ReportOptions sets the thresholds above which Report warns. The zero
// value uses the defaults.
type ReportOptions struct {
	// MaxTools is the tool count above which the report warns. Zero means
	// DefaultReportMaxTools; -1 disables the check.
	MaxTools int
	// MaxListBytes is the tools/list size in bytes above which the report
	// warns. Zero means DefaultReportMaxListBytes; -1 disables the check.
	MaxListBytes int
}

// Report summarizes what a document's tools cost a client: computed at
// startup so operators see a too-large API before a client does.
type Report struct {
	// Tools is the number of tools.
	Tools int
	// ListBytes is the size in bytes of the tools/list result
	// ({"tools":[…]}), with each tool serialized the way MCP sends it:
	// name, title, description, inputSchema, outputSchema and annotations.
	// It equals the size of the tools array the MCP Go SDK sends (the
	// adapter's tests check this); the JSON-RPC envelope and any _meta are
	// not counted.
	ListBytes int
	// TokenEstimate is ListBytes/4: the usual rule of thumb of four bytes
	// of JSON per token for English text and schemas. Real tokenizers
	// differ by ±30 %, more for non-Latin scripts.
	TokenEstimate int
	// LongestNames holds up to five of the longest tool names, longest
	// first (ties in byte order).
	LongestNames []string
	// Collisions lists the tools renamed by N6 because another tool (or a
	// name override) already had the name they wanted, in document order.
	Collisions []Collision
	// Warnings are set when a threshold is exceeded, one sentence each;
	// empty otherwise.
	Warnings []string
}

// Collision is one tool renamed by N6.
type Collision struct {
	Tool        string // the name it got, e.g. "list_users_2"
	Wanted      string // the name it would have had, e.g. "list_users"
	OperationID string // may be empty
	Method      string
	Path        string
}

// listedTool is a tool as tools/list sends it (MCP 2025-11-25 Tool).
type listedTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  listedHints     `json:"annotations"`
}

type listedHints struct {
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	ReadOnlyHint    bool `json:"readOnlyHint"`
}

// ListedSize returns the size in bytes of the tool's entry in tools/list
// (see Report.ListBytes for how exact it is).
func (t *Tool) ListedSize() int {
	b, err := json.Marshal(listedTool{
		Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		Annotations: listedHints{DestructiveHint: t.Destructive, IdempotentHint: t.Idempotent, ReadOnlyHint: t.ReadOnly},
	})
	if err != nil {
		// Only invalid schema JSON gets here; count the raw parts.
		return len(t.Name) + len(t.Title) + len(t.Description) + len(t.InputSchema) + len(t.OutputSchema)
	}
	return len(b)
}

// Report computes the startup report of d's tools with the thresholds of
// opts.
func (d *Document) Report(opts ReportOptions) Report {
	if opts.MaxTools == 0 {
		opts.MaxTools = DefaultReportMaxTools
	}
	if opts.MaxListBytes == 0 {
		opts.MaxListBytes = DefaultReportMaxListBytes
	}
	r := Report{Tools: len(d.Tools), ListBytes: len(`{"tools":[]}`)}
	for i, t := range d.Tools {
		if i > 0 {
			r.ListBytes++ // comma
		}
		r.ListBytes += t.ListedSize()
		if t.wanted != "" && t.wanted != t.Name {
			r.Collisions = append(r.Collisions, Collision{Tool: t.Name, Wanted: t.wanted, OperationID: t.OperationID, Method: t.Method, Path: t.PathTemplate})
		}
	}
	r.TokenEstimate = r.ListBytes / 4
	names := make([]string, len(d.Tools))
	for i, t := range d.Tools {
		names[i] = t.Name
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	r.LongestNames = names[:min(5, len(names))]
	if opts.MaxTools > 0 && r.Tools > opts.MaxTools {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d tools is more than %d: many clients degrade or cap the tool list; select fewer operations by tag, operationId or method", r.Tools, opts.MaxTools))
	}
	if opts.MaxListBytes > 0 && r.ListBytes > opts.MaxListBytes {
		r.Warnings = append(r.Warnings, fmt.Sprintf("tools/list is %d bytes (about %d tokens), more than %d: every model turn pays for it; select fewer operations or lower the schema budget", r.ListBytes, r.TokenEstimate, opts.MaxListBytes))
	}
	return r
}

// LogAttrs returns the report as slog key-value pairs in snake_case, for
// a startup log line.
func (r Report) LogAttrs() []any {
	coll := make([]string, len(r.Collisions))
	for i, c := range r.Collisions {
		coll[i] = c.String()
	}
	return []any{
		"tools", r.Tools,
		"tools_list_bytes", r.ListBytes,
		"token_estimate", r.TokenEstimate,
		"longest_names", r.LongestNames,
		"collisions", coll,
	}
}

// String returns "list_users_2 (wanted list_users): GET /v2/users (listUsers)".
func (c Collision) String() string {
	s := c.Tool + " (wanted " + c.Wanted + "): " + c.Method + " " + c.Path
	if c.OperationID != "" {
		s += " (" + c.OperationID + ")"
	}
	return s
}

// WriteText writes the report for people, one fact a line, warnings last
// prefixed "warning: ".
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "tools: %d\n", r.Tools)
	fmt.Fprintf(&b, "tools/list bytes: %d (about %d tokens at 4 bytes per token)\n", r.ListBytes, r.TokenEstimate)
	if len(r.LongestNames) > 0 {
		b.WriteString("longest names:")
		for _, n := range r.LongestNames {
			fmt.Fprintf(&b, " %s (%d)", n, len(n))
		}
		b.WriteByte('\n')
	}
	if len(r.Collisions) == 0 {
		b.WriteString("collisions: none\n")
	} else {
		fmt.Fprintf(&b, "collisions: %d\n", len(r.Collisions))
		for _, c := range r.Collisions {
			fmt.Fprintf(&b, "  %s\n", c)
		}
	}
	for _, wr := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wr)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
