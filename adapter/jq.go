package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/itchyny/gojq"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/internal/jsonvalue"
	"github.com/restmcp/restmcp/openapi"
)

// Options.JQFilter (docs/results.md "jq filter"): every tool whose 2xx
// answer is JSON lists an optional string argument jq_filter. restmcp makes
// the upstream call as usual, runs the filter (github.com/itchyny/gojq, a
// maintained pure-Go jq) on the whole JSON body, and answers with its
// output instead of the body, so a model reads the three fields it needs
// rather than a 100 KB list.
//
// The filter runs sandboxed: no environment ($ENV and env are empty), no
// input or inputs, no modules; within jqTimeout of CPU-bound work, on a body
// of at most jqMaxInput bytes, its output cut off past MaxResponseBytes (an
// error, not a truncated answer). A filter that does not parse is invalid
// arguments, naming the error, before anything is sent (and never billed,
// as for any invalid argument); one that fails when it runs is an error
// result naming the error, billed as the call was.

const (
	jqArgument = "jq_filter"
	jqTimeout  = 2 * time.Second
	jqMaxInput = 16 << 20
	jqProperty = `{"type":"string","description":"Optional jq filter applied to the JSON response; only its output is returned. Example: .items[] | {id, name}"}`
)

// withJQArgument returns schema, an input schema whose root is
// {"type":"object","properties":{…},…}, with the jq_filter property added
// last among its properties; schema itself when it already has one of that
// name or is not of that shape.
func withJQArgument(schema json.RawMessage) json.RawMessage {
	root, ok := jsonvalue.Members(schema)
	if !ok {
		return schema
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range root {
		jsonvalue.WriteKey(&b, i, m.Key)
		if m.Key != "properties" {
			b.Write(m.Raw)
			continue
		}
		props, ok := jsonvalue.Members(m.Raw)
		if !ok {
			return schema
		}
		b.WriteByte('{')
		for j, p := range props {
			if p.Key == jqArgument {
				return schema
			}
			jsonvalue.WriteKey(&b, j, p.Key)
			b.Write(p.Raw)
		}
		jsonvalue.WriteKey(&b, len(props), jqArgument)
		b.WriteString(jqProperty)
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes()
}

// takeJQFilter removes jq_filter from a tools/call's arguments object and
// compiles it. It returns the other arguments, and a nil code when there is
// no filter (absent or null); an invalid one is an *openapi.ArgumentError
// naming the problem.
func takeJQFilter(args json.RawMessage) (*jqFilter, json.RawMessage, error) {
	members, ok := jsonvalue.Members(args)
	if !ok {
		return nil, args, nil // not an object: request building says so
	}
	var filter json.RawMessage
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, m := range members {
		if m.Key == jqArgument {
			if filter != nil {
				return nil, nil, &openapi.ArgumentError{Param: jqArgument, Reason: "given more than once"}
			}
			filter = m.Raw
			continue
		}
		jsonvalue.WriteKey(&b, n, m.Key)
		n++
		b.Write(m.Raw)
	}
	b.WriteByte('}')
	if filter == nil {
		return nil, args, nil
	}
	if string(filter) == "null" {
		return nil, b.Bytes(), nil
	}
	var src string
	if json.Unmarshal(filter, &src) != nil {
		return nil, nil, &openapi.ArgumentError{Param: jqArgument, Reason: "must be a string: a jq filter"}
	}
	if _, err := compileJQ(src); err != nil {
		return nil, nil, &openapi.ArgumentError{Param: jqArgument, Reason: err.Error()}
	}
	return &jqFilter{src: src}, b.Bytes(), nil
}

// jqFilter is a call's jq filter, checked to compile; it runs in a jq
// worker (jqworker.go).
type jqFilter struct{ src string }

// compileJQ parses and compiles a filter with no environment, no modules
// and no input function (input, inputs are errors when run).
func compileJQ(src string) (*gojq.Code, error) {
	q, err := gojq.Parse(src)
	if err != nil {
		var pe *gojq.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("the filter does not parse at byte %d (%q): %v", pe.Offset, pe.Token, err)
		}
		return nil, fmt.Errorf("the filter does not parse: %v", err)
	}
	code, err := gojq.Compile(q, gojq.WithEnvironLoader(func() []string { return nil }))
	if err != nil {
		return nil, fmt.Errorf("the filter does not compile: %v", err)
	}
	return code, nil
}

// mapFiltered is mapResponse for a call with a jq filter: a 2xx JSON
// answer is read whole (up to jqMaxInput) and answered with the filter's
// output; every other answer is mapped as mapResponse maps it. An error
// means the body could not be read.
func (s *Server) mapFiltered(ctx context.Context, resp *http.Response, t *openapi.Tool, f *jqFilter) (*mcp.CallToolResult, error) {
	if resp.StatusCode/100 != 2 || !isJSON(contentType(resp.Header.Get("Content-Type"))) {
		return s.mapResponse(resp, t, nil, false)
	}
	if known, err := decodeContent(resp); err != nil || !known {
		return errorResult("jq_filter: the upstream's answer is in a content coding restmcp does not decode; not filtered"), nil
	}
	data, err := readAtMost(resp.Body, resp.ContentLength, jqMaxInput+1)
	if err != nil {
		return nil, fmt.Errorf("reading response body: %w", err)
	}
	if len(data) > jqMaxInput {
		return errorResult(fmt.Sprintf("jq_filter: the upstream's answer is larger than %d bytes, the most a filter reads; call without jq_filter to get its beginning", jqMaxInput)), nil
	}
	return s.runJQ(ctx, f, data, t), nil
}

// runJQ runs f on a JSON body in a jq worker and maps its output to a
// result: each value it yields as one line of JSON in the text;
// structuredContent, when the tool has an output schema, the single object
// the filter yielded made to fit it (R8a), else {} with a text saying so
// (R8b). A filter that fails or hits a bound is an error result naming it.
func (s *Server) runJQ(ctx context.Context, f *jqFilter, data []byte, t *openapi.Tool) *mcp.CallToolResult {
	out, refused := s.jq.run(ctx, f.src, data, s.opts.MaxResponseBytes)
	if refused != "" {
		return errorResult(refused)
	}
	text := strings.TrimSuffix(string(out), "\n")
	res := textResult(text, false)
	if len(t.OutputSchema) == 0 {
		return res
	}
	if !strings.Contains(text, "\n") {
		if obj := jsonObject(out); obj != nil {
			res.StructuredContent = t.ConformStructured(obj)
			return res
		}
	}
	res.StructuredContent = map[string]any{}
	note := "the jq_filter output is not one JSON object, so structuredContent is empty; the output follows."
	res.Content = append([]mcp.Content{&mcp.TextContent{Text: note}}, res.Content...)
	return res
}

// jqNumbers turns json.Number values into what gojq computes with: an int,
// a *big.Int for a larger integer, a float64 otherwise.
func jqNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil && i >= -(1<<53) && i <= 1<<53 {
			return int(i)
		}
		if !strings.ContainsAny(string(x), ".eE") {
			if b, ok := new(big.Int).SetString(string(x), 10); ok {
				return b
			}
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i, e := range x {
			x[i] = jqNumbers(e)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = jqNumbers(e)
		}
	}
	return v
}
