package openapi

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
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
	DestructiveHint bool  `json:"destructiveHint"`
	IdempotentHint  bool  `json:"idempotentHint"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
	ReadOnlyHint    bool  `json:"readOnlyHint"`
}

// ListedSize returns the size in bytes of the tool's entry in tools/list
// (see Report.ListBytes for how exact it is).
//
// The size is computed from the lengths of the parts, as encoding/json
// would write them, when the schemas are compact JSON (as Load emits them);
// otherwise the entry is marshaled.
func (t *Tool) ListedSize() int {
	in, ok := rawListedSize(t.InputSchema)
	out, ok2 := 0, true
	if len(t.OutputSchema) > 0 { // omitempty
		out, ok2 = rawListedSize(t.OutputSchema)
	}
	if ok && ok2 {
		n := len(`{"name":`) + jsonStringSize(t.Name) +
			len(`,"inputSchema":`) + in +
			len(`,"annotations":{"destructiveHint":,"idempotentHint":,"readOnlyHint":}}`) +
			boolSize(t.Destructive) + boolSize(t.Idempotent) + boolSize(t.ReadOnly)
		if t.OpenWorld != nil {
			n += len(`,"openWorldHint":`) + boolSize(*t.OpenWorld)
		}
		if t.Title != "" {
			n += len(`,"title":`) + jsonStringSize(t.Title)
		}
		if t.Description != "" {
			n += len(`,"description":`) + jsonStringSize(t.Description)
		}
		if len(t.OutputSchema) > 0 {
			n += len(`,"outputSchema":`) + out
		}
		return n
	}
	return t.marshaledSize()
}

func boolSize(b bool) int {
	if b {
		return len("true")
	}
	return len("false")
}

// jsonStringSize is the length of s as encoding/json writes it (quoted,
// HTML-escaped, each byte of invalid UTF-8 replaced by U+FFFD, three
// bytes).
func jsonStringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += len("\uFFFD")
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// rawListedSize is the length of a json.RawMessage as encoding/json
// writes it: "null" when nil; otherwise compacted, with <, >, & and
// U+2028/U+2029 escaped. It reports false when raw is not already
// compact (whitespace outside strings) or ends inside a string, where
// only marshaling tells.
func rawListedSize(raw []byte) (int, bool) {
	if raw == nil {
		return len("null"), true
	}
	if len(raw) == 0 {
		return 0, false // not JSON; MarshalJSON returns nothing
	}
	n := len(raw)
	inStr, esc := false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '<' || c == '>' || c == '&':
			n += 5
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xA8 || raw[i+2] == 0xA9):
			n += 3
		}
		if inStr {
			switch {
			case c < 0x20:
				return 0, false // invalid JSON
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case ' ', '\t', '\r', '\n':
			return 0, false
		}
	}
	return n, !inStr
}

// marshaledSize is ListedSize by encoding the entry.
func (t *Tool) marshaledSize() int {
	b, err := json.Marshal(listedTool{
		Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		Annotations: listedHints{DestructiveHint: t.Destructive, IdempotentHint: t.Idempotent, OpenWorldHint: t.OpenWorld, ReadOnlyHint: t.ReadOnly},
	})
	if err != nil {
		// Only invalid schema JSON gets here; count the raw parts.
		return len(t.Name) + len(t.Title) + len(t.Description) + len(t.InputSchema) + len(t.OutputSchema)
	}
	return len(b)
}

// Report computes the startup report of d's tools with the thresholds of
// opts.
// DropOutputSchemas removes every tool's outputSchema: tools are then
// listed without one, and structuredContent is sent as the response
// decodes, unconformed (R8).
func (d *Document) DropOutputSchemas() {
	for _, t := range d.Tools {
		t.OutputSchema = nil
		t.outShape = nil
	}
}

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
		r.Warnings = append(r.Warnings, fmt.Sprintf("tools/list is %d bytes (about %d tokens), more than %d: every model turn pays for it; select fewer operations (include_tags, include_operations, exclude_operations) or lower schema_budget_bytes and output_schema_budget (or output_schemas: false)", r.ListBytes, r.TokenEstimate, opts.MaxListBytes))
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
