package openapi

import (
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
)

// Severity classifies a Problem.
type Severity int

const (
	// SeverityWarning marks a problem that was repaired without losing
	// meaning (a 3.1 $anchor reference rewritten to a JSON pointer, a
	// description given as a $ref inlined), or a note such as an overlay
	// action that matched nothing.
	SeverityWarning Severity = iota + 1
	// SeverityError marks a defect that makes the document unloadable as
	// published: in lenient mode the offending node, reference or
	// operation was dropped or replaced, so some content is lost.
	SeverityError
)

// String returns "warning" or "error".
func (s Severity) String() string {
	switch s {
	case SeverityWarning:
		return "warning"
	case SeverityError:
		return "error"
	}
	return "severity(" + strconv.Itoa(int(s)) + ")"
}

// Problem is one defect found while loading a document.
type Problem struct {
	Severity Severity
	// File is the document the defect is in: relative to the spec's folder
	// for files, the location as given otherwise.
	File string
	// Pointer is the RFC 6901 JSON pointer of the defective node inside
	// File ("/components/schemas/Pet/properties/id"); "" for the whole file.
	Pointer string
	// Line is the 1-based line of the node in File; 0 when unknown.
	Line int
	// Operation is "<METHOD> <path>" when the defect lies inside an
	// operation (or dropped it); "" otherwise.
	Operation string
	// Message says what is wrong and, in lenient mode, what was done.
	Message string
}

// String returns "<severity>: <file>#<pointer> (line N) [operation]: <message>".
func (p Problem) String() string {
	var sb strings.Builder
	sb.WriteString(p.Severity.String())
	sb.WriteString(": ")
	sb.WriteString(p.File)
	if p.Pointer != "" {
		sb.WriteString("#")
		sb.WriteString(p.Pointer)
	}
	if p.Line > 0 {
		fmt.Fprintf(&sb, " (line %d)", p.Line)
	}
	if p.Operation != "" {
		sb.WriteString(" [")
		sb.WriteString(p.Operation)
		sb.WriteString("]")
	}
	sb.WriteString(": ")
	sb.WriteString(p.Message)
	return sb.String()
}

// LogValue lets a Problem be logged as a group of attributes.
func (p Problem) LogValue() slog.Value {
	return slog.GroupValue(p.attrs()...)
}

func (p Problem) attrs() []slog.Attr {
	a := []slog.Attr{slog.String("file", p.File), slog.String("pointer", p.Pointer)}
	if p.Line > 0 {
		a = append(a, slog.Int("line", p.Line))
	}
	if p.Operation != "" {
		a = append(a, slog.String("operation", p.Operation))
	}
	return append(a, slog.String("severity", p.Severity.String()), slog.String("reason", p.Message))
}

// LoadError is returned by Load in strict mode (LoadOptions.Lenient false)
// when the document does not load. Err is the loader's own error; Problems
// lists every defect that a lenient pass over the same document found, so
// that one run reports all of them, not only the first.
type LoadError struct {
	Location string
	Err      error
	Problems []Problem
}

// Error returns the loader's error followed by one line per problem.
func (e *LoadError) Error() string {
	var sb strings.Builder
	sb.WriteString(e.Err.Error())
	if len(e.Problems) > 0 {
		fmt.Fprintf(&sb, "\n%d problem(s) in %s:", len(e.Problems), e.Location)
		for _, p := range e.Problems {
			sb.WriteString("\n  ")
			sb.WriteString(p.String())
		}
	}
	return sb.String()
}

// Unwrap returns the loader's error.
func (e *LoadError) Unwrap() error { return e.Err }

// operationOf returns "<METHOD> <path>" for a pointer inside an operation
// (tokens "paths", path, method, …), "" otherwise.
func operationOf(toks []string) string {
	if len(toks) >= 3 && toks[0] == "paths" {
		m := strings.ToUpper(toks[2])
		for _, k := range methodOrder {
			if k == m {
				return m + " " + toks[1]
			}
		}
	}
	return ""
}

// jsonPointer builds an RFC 6901 pointer (without '#') from tokens.
func jsonPointer(toks []string) string {
	if len(toks) == 0 {
		return ""
	}
	return strings.TrimPrefix(pointer(toks...), "#")
}

// rootName names the root document in problems: relative to the ref
// root for files, as given otherwise.
func (s *source) rootName() string {
	if s.url == nil {
		return s.name
	}
	return s.relName(s.url)
}

// relName names document u in problems: relative to the ref root for
// files, the URL otherwise.
func (s *source) relName(u *url.URL) string {
	if s.dir != "" && u.Scheme != "http" && u.Scheme != "https" {
		if rel, err := filepath.Rel(s.dir, filepath.FromSlash(u.Path)); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	if u == s.url {
		return s.name
	}
	return u.String()
}
