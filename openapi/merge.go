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
// collision. served is the names an earlier merge served, by API and
// operation ([MergedNames]; nil for the first): a tool keeps the name it
// was served under while its document's name for it is unchanged, and a
// name served for a tool that is gone is given to no other, as
// LoadOptions.Served does within one document. The merged tools are
// copies: docs keep the names they assigned themselves, and a table
// serving an earlier merge is never written to. The Document returned has
// no JSON (Document.JSON fails).
func Merge(docs []*Document, max int, served map[string]string, log *slog.Logger) *Document {
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
	// Names as served before, then every name served before taken.
	sticky := map[*Tool]string{}
	for _, d := range docs {
		for _, dt := range d.Tools {
			if name, ok := served[mergedKey(d.API, dt)]; ok && !taken[name] && suffixOf(name, dt.Name, max) {
				sticky[dt], taken[name] = name, true
			}
		}
	}
	for _, name := range served {
		taken[name] = true
	}
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
			if name, ok := sticky[dt]; ok {
				if name != dt.Name {
					t.wanted = dt.Name
				}
				t.Name = name
			} else if first := owner[t.Name]; first != nil || taken[t.Name] {
				kept := "a tool served before this reload"
				if first != nil {
					kept = first.API
				}
				t.wanted = dt.Name
				t.Name = uniqueName(dt.Name, taken, max)
				log.Warn("tool name collision across APIs; renamed",
					"api", t.API, "operation_id", t.OperationID, "method", t.Method, "path", t.PathTemplate,
					"wanted", dt.Name, "tool", t.Name, "kept_by_api", kept)
			}
			owner[t.Name], taken[t.Name] = t, true
			out.Tools = append(out.Tools, t)
		}
	}
	out.Title = strings.Join(titles, ", ")
	out.Description = "The tools of " + strconv.Itoa(len(docs)) + " APIs; each tool's name starts with its API's name:\n" + strings.Join(lines, "\n")
	return out
}

// mergedKey identifies a tool in Merge's served map: its API and
// operation.
func mergedKey(api string, t *Tool) string { return api + "\x00" + ServedKey(t.Method, t.PathTemplate) }

// MergedNames is Merge's served for the next merge after m: prev with m's
// tools' names. It is a new map.
func MergedNames(prev map[string]string, m *Document) map[string]string {
	out := make(map[string]string, len(prev)+len(m.Tools))
	for k, v := range prev {
		out[k] = v
	}
	for _, t := range m.Tools {
		out[mergedKey(t.API, t)] = t.Name
	}
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
