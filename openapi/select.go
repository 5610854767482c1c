package openapi

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/restmcp/restmcp/internal/glob"
)

// ExtensionName is the operation extension that sets a tool's name
// explicitly, overriding N1–N5. Selection.Names wins over it.
const ExtensionName = "x-mcp-name"

// Selection chooses which operations of a large API become tools, and may
// name some of them explicitly. The zero value keeps every operation and
// names none.
//
// An operation is kept when it passes every non-empty include list (tags,
// operations and methods are ANDed) and matches no exclude list. Excluded
// operations do not take part in naming at all: they consume no name, so a
// tool's name depends only on the selected set (N6 determinism within the
// selection). Selecting a different set can therefore change which
// operation gets a "_2" suffix. The same holds for operations dropped in
// lenient mode.
type Selection struct {
	// IncludeTags keeps only operations that have at least one of these
	// tags. Tags compare case-insensitively. Empty means every operation.
	IncludeTags []string
	// ExcludeTags drops operations that have any of these tags.
	ExcludeTags []string
	// IncludeOperations keeps only operations matching at least one of
	// these globs (see MatchGlob). A glob is matched against the
	// operationId and against the operation's N1–N5 tool name (so
	// operations without an operationId can be selected as well, for
	// example "get_users_*"). Empty means every operation.
	IncludeOperations []string
	// ExcludeOperations drops operations matching any of these globs,
	// matched as for IncludeOperations.
	ExcludeOperations []string
	// IncludeMethods keeps only operations with one of these HTTP methods
	// (case-insensitive: "get", "POST"). Empty means every method.
	IncludeMethods []string
	// ExcludeMethods drops operations with any of these methods.
	ExcludeMethods []string
	// Names sets tool names by operationId, overriding both N1–N5 and the
	// x-mcp-name extension. Each name must match ^[a-zA-Z0-9_-]{1,max}$
	// with max the MaxNameLength. An operationId that no operation of the
	// document has is an error (a typo would otherwise pass silently); one
	// that names an excluded operation is ignored. Nil means none.
	Names map[string]string
	// Annotations sets tool annotations by operationId, over the method's
	// defaults and the document's extensions: each value is read by
	// ParseAnnotations ("readOnly idempotent !destructive"). A value that
	// does not parse, or an operationId no operation has, is an error. Nil
	// means none.
	Annotations map[string]string
}

// filters reports whether s has any include or exclude list.
func (s *Selection) filters() bool {
	return len(s.IncludeTags)+len(s.ExcludeTags)+len(s.IncludeOperations)+len(s.ExcludeOperations)+
		len(s.IncludeMethods)+len(s.ExcludeMethods) > 0
}

// validate reports malformed selection entries: empty globs and unknown
// methods, all at once.
func (s *Selection) validate() error {
	var errs []error
	for _, l := range []struct {
		name  string
		globs []string
	}{{"include operations", s.IncludeOperations}, {"exclude operations", s.ExcludeOperations}} {
		for _, g := range l.globs {
			if strings.TrimSpace(g) == "" {
				errs = append(errs, fmt.Errorf("selection: %s: empty pattern", l.name))
			}
		}
	}
	for _, l := range []struct {
		name    string
		methods []string
	}{{"include methods", s.IncludeMethods}, {"exclude methods", s.ExcludeMethods}} {
		for _, m := range l.methods {
			if !slices.Contains(methodOrder[:], strings.ToUpper(strings.TrimSpace(m))) {
				errs = append(errs, fmt.Errorf("selection: %s: unknown HTTP method %q", l.name, m))
			}
		}
	}
	return errors.Join(errs...)
}

// keeps reports whether the operation passes the selection. name is the
// operation's N1–N5 tool name.
func (s *Selection) keeps(method, operationID, name string, tags []string) bool {
	if !s.filters() {
		return true
	}
	hasTag := func(list []string) bool {
		for _, t := range tags {
			for _, w := range list {
				if strings.EqualFold(strings.TrimSpace(w), t) {
					return true
				}
			}
		}
		return false
	}
	matchOp := func(globs []string) bool {
		for _, g := range globs {
			g = strings.TrimSpace(g)
			if operationID != "" && MatchGlob(g, operationID) || MatchGlob(g, name) {
				return true
			}
		}
		return false
	}
	hasMethod := func(list []string) bool {
		for _, m := range list {
			if strings.EqualFold(strings.TrimSpace(m), method) {
				return true
			}
		}
		return false
	}
	switch {
	case len(s.IncludeTags) > 0 && !hasTag(s.IncludeTags),
		len(s.IncludeOperations) > 0 && !matchOp(s.IncludeOperations),
		len(s.IncludeMethods) > 0 && !hasMethod(s.IncludeMethods):
		return false
	}
	return !hasTag(s.ExcludeTags) && !matchOp(s.ExcludeOperations) && !hasMethod(s.ExcludeMethods)
}

// MatchGlob reports whether name matches pattern: restmcp's one glob
// dialect (package internal/glob: "*" and "?", no classes).
func MatchGlob(pattern, name string) bool { return glob.Match(pattern, name) }

// isToolName reports whether s matches ^[a-zA-Z0-9_-]{1,max}$.
func isToolName(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// selected is one operation that passed the selection, with the name it
// will get.
type selected struct {
	path      string
	item      *openapi3.PathItem
	method    string
	op        *openapi3.Operation
	wanted    string // N1–N5 name, or the override
	override  string // overrideConfig or ExtensionName when wanted is an override
	generated string // the N1–N5 name
}

// overrideConfig marks a name from Selection.Names (the operator's
// configuration), as opposed to the document's ExtensionName.
const overrideConfig = "tool name override"

// label names an operation in messages: "GET /users (listUsers)".
func (e *selected) label() string {
	if e.op.OperationID != "" {
		return e.method + " " + e.path + " (" + e.op.OperationID + ")"
	}
	return e.method + " " + e.path
}

// selectOperations walks the document in N6 order, applies the selection
// and the name overrides, and returns the kept operations, each with the
// name it wants (generated or override). Invalid or duplicate overrides,
// unknown operationIds in Names and malformed selection entries are
// reported together.
//
// In lenient mode a defective x-mcp-name (not a string, not a valid tool
// name, or a name another override already holds) is a document defect
// like any other: the operation keeps its generated name and the defect
// is one of the returned problems. Config overrides are checked first, so
// the operator's name wins over the document's; their defects stay errors.
func (b *builder) selectOperations(paths []string) ([]*selected, []Problem, error) {
	sel := &b.opts.Select
	errs := []error{sel.validate()}
	var problems []Problem
	// demote gives e its generated name back (lenient mode) or reports err.
	demote := func(e *selected, err error) {
		if !b.opts.Lenient || e.override != ExtensionName {
			errs = append(errs, err)
			return
		}
		problems = append(problems, Problem{Severity: SeverityError, File: b.src.rootName(),
			Pointer:   strings.TrimPrefix(pointer("paths", e.path, strings.ToLower(e.method), ExtensionName), "#"),
			Operation: e.method + " " + e.path,
			Message:   err.Error() + "; the generated name " + e.generated + " is used instead"})
		e.wanted, e.override = e.generated, ""
	}
	ids := map[string]bool{}
	var kept []*selected
	for _, p := range paths {
		item := b.doc.Paths.Value(p)
		if item == nil {
			continue
		}
		ms, ops := operations(item)
		for i, m := range ms {
			op := ops[i]
			ids[op.OperationID] = true
			// Selection globs match the document's own names, without the
			// API prefix.
			if !sel.keeps(m, op.OperationID, StyledToolName(op.OperationID, m, p, b.maxName, b.opts.NameStyle), op.Tags) {
				continue
			}
			name := apiToolName(b.opts.API, op.OperationID, m, p, b.maxName, b.opts.NameStyle)
			e := &selected{path: p, item: item, method: m, op: op, wanted: name, generated: name}
			if v, ok := op.Extensions[ExtensionName]; ok && v != nil {
				s, isString := v.(string)
				e.wanted, e.override = s, ExtensionName
				if !isString {
					demote(e, fmt.Errorf("%s (%s): %s: must be a string, got %v", e.label(), pointer("paths", p, strings.ToLower(m), ExtensionName), ExtensionName, v))
				}
			}
			if s, ok := sel.Names[op.OperationID]; ok && op.OperationID != "" {
				e.wanted, e.override = s, overrideConfig
			}
			if e.override != "" && !isToolName(e.wanted, b.maxName) {
				demote(e, fmt.Errorf("%s: %s %q must match ^[a-zA-Z0-9_-]{1,%d}$", e.label(), e.override, e.wanted, b.maxName))
			}
			kept = append(kept, e)
		}
	}
	errs = append(errs, b.checkOverrides(ids)...)

	owner := map[string]*selected{}
	for _, kind := range []string{overrideConfig, ExtensionName} {
		for _, e := range kept {
			if e.override != kind {
				continue
			}
			if first, dup := owner[e.wanted]; dup {
				x, y := first, e
				if y.path < x.path || y.path == x.path && slices.Index(methodOrder[:], y.method) < slices.Index(methodOrder[:], x.method) {
					x, y = y, x // name both in N6 order
				}
				demote(e, fmt.Errorf("tool name %q is given to both %s and %s", e.wanted, x.label(), y.label()))
				continue
			}
			owner[e.wanted] = e
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return kept, problems, nil
}

// checkOverrides checks the configured names and annotations
// (Select.Names, Select.Annotations) against the document's operationIds
// (ids), and keeps the annotations it parses for the builder.
func (b *builder) checkOverrides(ids map[string]bool) []error {
	sel := &b.opts.Select
	var errs []error
	var unknown []string
	for id := range sel.Names {
		if id == "" || !ids[id] {
			unknown = append(unknown, id)
		}
	}
	slices.Sort(unknown)
	for _, id := range unknown {
		errs = append(errs, fmt.Errorf("tool name override for operationId %q: no operation has that operationId", id))
	}
	unknown = unknown[:0]
	for id, v := range sel.Annotations {
		if id == "" || !ids[id] {
			unknown = append(unknown, id)
			continue
		}
		a, err := ParseAnnotations(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("tool annotations for operationId %q: %w", id, err))
			continue
		}
		if b.configAnnotations == nil {
			b.configAnnotations = map[string]*Annotations{}
		}
		b.configAnnotations[id] = &a
	}
	slices.Sort(unknown)
	for _, id := range unknown {
		errs = append(errs, fmt.Errorf("tool annotations for operationId %q: no operation has that operationId", id))
	}
	return errs
}

// assignNames returns the final names of the operations that became tools
// (in N6 order): overrides first, so they never get a suffix, then the
// generated names in N6 order, each taking the next free "_2", "_3", …
// around the overrides. Operations that were excluded, or dropped in
// lenient mode, are not in kept and take no names.
//
// On a reload (LoadOptions.Served), an operation first keeps the name it
// was served under when its wanted name is unchanged, and every name
// served before is taken: generated names go around names of operations
// that are gone.
func (b *builder) assignNames(kept []*selected) []string {
	taken := map[string]bool{}
	owner := map[string]*selected{} // name → the operation that holds it
	for _, e := range kept {
		if e.override != "" {
			owner[e.wanted] = e
			taken[e.wanted] = true
		}
	}
	names := make([]string, len(kept))
	for i, e := range kept {
		if n, ok := b.opts.Served[ServedKey(e.method, e.path)]; ok && e.override == "" && !taken[n] && suffixOf(n, e.wanted, b.maxName) {
			names[i], taken[n] = n, true
		}
	}
	for _, n := range b.opts.Served {
		taken[n] = true
	}
	for _, e := range kept {
		if e.override == "" && owner[e.wanted] == nil {
			owner[e.wanted] = e
		}
	}
	for i, e := range kept {
		switch {
		case e.override != "":
			names[i] = e.wanted
			continue
		case names[i] != "":
			continue // as served before
		}
		names[i] = uniqueName(e.wanted, taken, b.maxName)
		if names[i] != e.wanted {
			keptBy := "a tool served before this reload"
			if o := owner[e.wanted]; o != e {
				keptBy = o.label()
			}
			b.log.Warn("tool name collision; renamed",
				"operation_id", e.op.OperationID, "method", e.method, "path", e.path, "wanted", e.wanted, "tool", names[i],
				"kept_by", keptBy)
		}
	}
	return names
}

// ServedKey identifies an operation in LoadOptions.Served: its method
// (upper case) and path template, "GET /users/{id}".
func ServedKey(method, path string) string { return method + " " + path }

// ServedNames is LoadOptions.Served for the next reload of a document now
// serving doc: prev (the names served before, retired ones included) with
// doc's tools' names by operation. It is a new map.
func ServedNames(prev map[string]string, doc *Document) map[string]string {
	m := make(map[string]string, len(prev)+len(doc.Tools))
	for k, v := range prev {
		m[k] = v
	}
	for _, t := range doc.Tools {
		m[ServedKey(t.Method, t.PathTemplate)] = t.Name
	}
	return m
}

// suffixOf reports whether name is wanted or wanted with an N6 suffix
// ("_2", "_3", …, shortened to fit max as withSuffix does).
func suffixOf(name, wanted string, max int) bool {
	if name == wanted {
		return true
	}
	i := strings.LastIndexByte(name, '_')
	if i < 0 {
		return false
	}
	n, err := strconv.Atoi(name[i+1:])
	return err == nil && n >= 2 && withSuffix(wanted, n, max) == name
}
