package openapi

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// Merge serves the tools of several documents, each loaded with its own
// LoadOptions.API, as one Document: the tools of docs in order (each
// document's tools in N6 order), the problems of each, a title naming the
// APIs and a description listing them.
//
// N6 holds across the documents: a name that an earlier document's tool
// already holds (two overrides alike, or two capped names that agree) is
// given the next free "_2", "_3", … within max (MaxNameLength; 0 means
// DefaultMaxNameLength), a warning is logged, and Report lists the
// collision. The merged tools are copies: docs keep the names they
// assigned themselves, so merging again after one document was reloaded
// gives back a name that no longer collides, and a table serving an
// earlier merge is never written to. The Document returned has no JSON
// (Document.JSON fails).
func Merge(docs []*Document, max int, log *slog.Logger) *Document {
	if max <= 0 {
		max = DefaultMaxNameLength
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	out := &Document{}
	var titles, lines []string
	n := 0
	for _, d := range docs {
		n += len(d.Tools)
	}
	out.Tools = make([]*Tool, 0, n)
	owner := make(map[string]*Tool, n)
	taken := make(map[string]bool, n)
	for _, d := range docs {
		api := d.API
		titles = append(titles, d.Title)
		line := "- " + api + ": " + d.Title
		if d.Version != "" {
			line += " (version " + d.Version + ")"
		}
		lines = append(lines, line)
		out.Problems = append(out.Problems, d.Problems...)
		for _, dt := range d.Tools {
			t := new(Tool)
			*t = *dt
			if first := owner[t.Name]; first != nil {
				t.wanted = dt.Name
				t.Name = uniqueName(dt.Name, taken, max)
				log.Warn("tool name collision across APIs; renamed",
					"api", t.API, "operation_id", t.OperationID, "method", t.Method, "path", t.PathTemplate,
					"wanted", dt.Name, "tool", t.Name, "kept_by_api", first.API)
			}
			owner[t.Name], taken[t.Name] = t, true
			out.Tools = append(out.Tools, t)
		}
	}
	out.Title = strings.Join(titles, ", ")
	out.Description = "The tools of " + strconv.Itoa(len(docs)) + " APIs; each tool's name starts with its API's name:\n" + strings.Join(lines, "\n")
	return out
}

// CheckPrefixes refuses tools that would be served inside another API's
// name prefix: a name given by x-mcp-name or tool_names is used as given
// (A5), so API a's operation named "b_list" would be served beside API b's
// tools, and a plan pattern written for API b (b_*) would grant it. The
// error names each such tool, its API and the API whose prefix it takes.
// Generated names start with their own API's name and "_", and no API name
// is another's followed by "_" (config), so only given names can.
func CheckPrefixes(docs []*Document) error {
	var errs []error
	for _, d := range docs {
		for _, t := range d.Tools {
			for _, o := range docs {
				if o == d || o.API == "" || o.API == d.API || !strings.HasPrefix(t.Name, o.API+"_") {
					continue
				}
				errs = append(errs, fmt.Errorf("api %s: tool %q (%s %s) would be served inside API %s's names (%s_…), so a plan pattern such as %s_* would grant it; give it a name outside that prefix (x-mcp-name or tool_names)",
					d.API, t.Name, t.Method, t.PathTemplate, o.API, o.API, o.API))
			}
		}
	}
	return errors.Join(errs...)
}
