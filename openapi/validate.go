package openapi

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	neturl "net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/restmcp/restmcp/internal/jsonvalue"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Argument validation checks each top-level argument against its property
// of the tool's input schema with github.com/santhosh-tekuri/jsonschema/v6,
// a JSON Schema 2020-12 validator that passes the official test suite
// (https://github.com/json-schema-org/JSON-Schema-Test-Suite;
// TestJSONSchemaTestSuite runs the keywords restmcp emits). It validates the
// values parseJSON decoded once per call, which request building then uses.
// format and content* are annotations, as 2020-12 makes them by default.
//
// Patterns are ECMA-262 regular expressions
// (https://json-schema.org/draft/2020-12/json-schema-validation#section-6.3.3).
// A pattern that Go's RE2 accepts is matched by RE2 (linear time, and the
// same answers for the syntax the two share); one that only ECMA-262
// accepts (lookaround, backreferences, \cX) is matched by
// github.com/dlclark/regexp2 in ECMAScript mode, with patternTimeout per
// match: a value that takes longer is refused, so a backtracking pattern in
// the document cannot be turned against the server by a crafted argument.
//
// Validators are compiled on a tool's first call (sync.Once per tool), not
// in Load, so that a deployment pays only for the tools it calls
// (BenchmarkFirstCall).

// patternTimeout bounds one match of an ECMA-only pattern (regexp2
// backtracks).
const patternTimeout = 50 * time.Millisecond

// validators returns the compiled schema of each top-level input property.
// Validating per property lets NewRequest name the offending argument
// exactly; required and unknown keys are checked by NewRequest itself from
// the plan.
func (p *requestPlan) validators() map[string]*argSchema {
	p.compileOnce.Do(func() { p.compiled = compileArgSchemas(p.inputSchema) })
	return p.compiled
}

// ArgumentProblems compiles the tool's argument schemas now (as its first
// call would) and returns an error Problem for each argument whose schema
// does not compile (a misspelt type such as "strin", a pattern no engine
// takes): every call of the tool would be refused with that reason.
// restmcp validate reports them; serve does not pay for them at startup.
func (t *Tool) ArgumentProblems() []Problem {
	var out []Problem
	compiled := t.plan.validators()
	for _, name := range slices.Sorted(maps.Keys(compiled)) {
		if err := compiled[name].err; err != nil {
			out = append(out, Problem{Severity: SeverityError, Operation: t.Method + " " + t.PathTemplate,
				Message: fmt.Sprintf("tool %s: argument %q: its schema does not compile (%s), so every call of the tool would be refused", t.Name, name, firstCause(err))})
		}
	}
	return out
}

// firstCause is the first innermost line of a schema compiler's error (its
// lines nest causes by indentation: "- at '/type': value must be one of
// …"), without the list mark; the error's first line when it has one line.
func firstCause(err error) string {
	lines := strings.Split(err.Error(), "\n")
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	for i, l := range lines {
		if i > 0 && (i+1 == len(lines) || indent(lines[i+1]) <= indent(l)) {
			return strings.TrimPrefix(strings.TrimSpace(l), "- ")
		}
	}
	return lines[0]
}

// argSchema is one argument's compiled schema, or why it did not compile.
type argSchema struct {
	// typeOnly, when not "", is the schema's only assertion: a type
	// ("string", "integer", …), checked without the library, which is
	// most arguments of most tools (path, query and header parameters).
	typeOnly string
	schema   *jsonschema.Schema
	err      error  // not nil: every value is refused with this reason
	url      string // the document's URL in the compiler
	doc      any    // the document, to read a failing keyword's schema
}

// compileArgSchemas compiles every property of an input schema, each as a
// document of its own that carries the root's $defs, so that local
// "#/$defs/…" references resolve.
func compileArgSchemas(inputSchema []byte) map[string]*argSchema {
	out := map[string]*argSchema{}
	root, err := jsonvalue.Parse(inputSchema)
	m, _ := root.(map[string]any)
	if err != nil || m == nil {
		return out
	}
	props, _ := m["properties"].(map[string]any)
	defs, hasDefs := m["$defs"]
	c := newSchemaCompiler()
	for i, name := range slices.Sorted(maps.Keys(props)) {
		doc := props[name]
		if sm, ok := doc.(map[string]any); ok && hasDefs {
			sm = maps.Clone(sm)
			sm["$defs"] = defs
			doc = sm
		}
		out[name] = compileArgSchema(c, "urn:restmcp:argument:"+strconv.Itoa(i), doc)
	}
	return out
}

// annotations are the keywords that assert nothing in JSON Schema 2020-12
// (format and content* by default), so a schema of "type" and these is
// checked by its type alone.
var annotations = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "format": true,
	"contentEncoding": true, "contentMediaType": true, "contentSchema": true,
}

// onlyType returns the type of a schema whose only assertion is one
// "type" string, else "".
func onlyType(doc any) string {
	m, ok := doc.(map[string]any)
	if !ok {
		return ""
	}
	t, _ := m["type"].(string)
	switch t {
	case "string", "integer", "number", "boolean", "object", "array", "null":
	default:
		return ""
	}
	for k := range m {
		if k != "type" && !annotations[k] && !strings.HasPrefix(k, "x-") {
			return ""
		}
	}
	return t
}

// newSchemaCompiler returns a compiler of JSON Schema 2020-12 with
// restmcp's pattern engine, that loads no schema from outside.
func newSchemaCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseRegexpEngine(compilePattern)
	c.UseLoader(refuseLoader{})
	return c
}

// compileArgSchema compiles doc, one argument's schema, as the document
// url of c.
func compileArgSchema(c *jsonschema.Compiler, url string, doc any) *argSchema {
	if t := onlyType(doc); t != "" {
		return &argSchema{typeOnly: t}
	}
	a := &argSchema{url: url, doc: doc}
	err := c.AddResource(url, doc)
	if err == nil {
		a.schema, err = c.Compile(url)
	}
	if err != nil {
		a.err = fmt.Errorf("its schema does not compile, so no value can be checked: %w", err)
	}
	return a
}

// refuseLoader loads no schema: the converter emits only local references.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("openapi: the input schema refers to %s; only local #/$defs references are allowed", url)
}

// compilePattern is the jsonschema.RegexpEngine described above.
func compilePattern(s string) (jsonschema.Regexp, error) {
	if re2, ok := ecmaWhitespace(s); ok {
		if re, err := regexp.Compile(re2); err == nil {
			return goPattern{re, s}, nil
		}
	}
	re, err := regexp2.Compile(s, regexp2.ECMAScript)
	if err != nil {
		return nil, fmt.Errorf("not an ECMA-262 regular expression: %w", err)
	}
	re.MatchTimeout = patternTimeout
	return ecmaPattern{re}, nil
}

// goPattern is an RE2 translation of the document's pattern, which String
// returns.
type goPattern struct {
	re  *regexp.Regexp
	src string
}

func (p goPattern) MatchString(s string) bool { return p.re.MatchString(s) }
func (p goPattern) String() string            { return p.src }

// ecmaSpace is ECMA-262's \s: WhiteSpace and LineTerminator
// (https://tc39.es/ecma262/#sec-characterclassescape), as the body of an
// RE2 character class. RE2's own \s is ASCII only.
const ecmaSpace = `\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}`

// ecmaWhitespace rewrites the \s and \S of an ECMA-262 pattern into RE2
// classes with ECMA-262's meaning; false when it cannot (\S inside a
// class), and the pattern goes to regexp2.
func ecmaWhitespace(p string) (string, bool) {
	if !strings.Contains(p, `\s`) && !strings.Contains(p, `\S`) {
		return p, true
	}
	return mapEscapes(p, func(n byte, inClass bool) (string, bool) {
		switch {
		case n == 's' && inClass:
			return ecmaSpace, true
		case n == 's':
			return "[" + ecmaSpace + "]", true
		case n == 'S' && inClass:
			return "", false
		case n == 'S':
			return "[^" + ecmaSpace + "]", true
		}
		return "\\" + string(n), true
	})
}

// ecmaPattern is a regexp2 pattern as a jsonschema.Regexp; a match that
// times out counts as no match.
type ecmaPattern struct{ re *regexp2.Regexp }

func (p ecmaPattern) MatchString(s string) bool {
	ok, err := p.re.MatchString(s)
	return err == nil && ok
}

func (p ecmaPattern) String() string { return p.re.String() }

// validate checks v, one argument's decoded value, against a. The error,
// a *validationError, names the first problem in a fixed order (see
// firstProblem), so the same value always gets the same message.
func (a *argSchema) validate(v any) error {
	if a.typeOnly != "" {
		got := jsonType(v)
		if got == a.typeOnly || (a.typeOnly == "number" && got == "integer") {
			return nil
		}
		return &validationError{reason: "has type " + got + ", want " + a.typeOnly}
	}
	if a.err != nil {
		return &validationError{reason: a.err.Error()}
	}
	err := a.schema.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &validationError{reason: err.Error()}
	}
	leaf := firstProblem(ve)
	return &validationError{path: instancePath(v, leaf.InstanceLocation), reason: a.problemReason(leaf, v)}
}

// validationError is a reason with the JSON path inside the argument
// ("items[2].name").
type validationError struct {
	path   string
	reason string
}

func (e *validationError) Error() string {
	if e.path == "" {
		return e.reason
	}
	return e.path + ": " + e.reason
}

// keywordOrder is the order in which problems at one instance location are
// reported: the value's type first, then its allowed values, its bounds,
// and the keywords that look inside it.
var keywordOrder = map[string]int{
	"type": 1, "enum": 2, "const": 3,
	"minimum": 4, "exclusiveMinimum": 5, "maximum": 6, "exclusiveMaximum": 7, "multipleOf": 8,
	"minLength": 9, "maxLength": 10, "pattern": 11,
	"minItems": 12, "maxItems": 13, "uniqueItems": 14, "items": 15, "prefixItems": 16,
	"required": 17, "properties": 18, "additionalProperties": 19,
	"allOf": 20, "anyOf": 21, "oneOf": 22, "not": 23, "false": 24,
}

// firstProblem returns the problem of e to report: a leaf of the error
// tree (or an anyOf, which reports its own first branch), the one at the
// shallowest, then smallest, instance location (array indexes compare as
// numbers), then earliest in keywordOrder. The library collects every
// problem, in map order for objects; choosing by location makes the
// message deterministic.
func firstProblem(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return e
	}
	if _, ok := e.ErrorKind.(*kind.AnyOf); ok {
		return e
	}
	var best *jsonschema.ValidationError
	for _, c := range e.Causes {
		if l := firstProblem(c); best == nil || compareProblems(l, best) < 0 {
			best = l
		}
	}
	return best
}

func compareProblems(a, b *jsonschema.ValidationError) int {
	if c := cmp.Compare(len(a.InstanceLocation), len(b.InstanceLocation)); c != 0 {
		return c
	}
	for i := range a.InstanceLocation {
		x, y := a.InstanceLocation[i], b.InstanceLocation[i]
		nx, ex := strconv.Atoi(x)
		ny, ey := strconv.Atoi(y)
		if ex == nil && ey == nil {
			if c := cmp.Compare(nx, ny); c != 0 {
				return c
			}
		} else if c := strings.Compare(x, y); c != 0 {
			return c
		}
	}
	return cmp.Compare(problemRank(a), problemRank(b))
}

func problemRank(e *jsonschema.ValidationError) int {
	if _, ok := e.ErrorKind.(*kind.FalseSchema); ok {
		return keywordOrder["false"]
	}
	if p := e.ErrorKind.KeywordPath(); len(p) > 0 {
		if r, ok := keywordOrder[p[0]]; ok {
			return r
		}
	}
	return len(keywordOrder) + 1
}

// instancePath writes a location inside v as restmcp's messages do:
// "a.b", "[2]", "items[2].name".
func instancePath(v any, loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		switch x := v.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(x) {
				v = x[i]
			}
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
			if m, ok := v.(map[string]any); ok {
				v = m[tok]
			}
		}
	}
	return b.String()
}

// valueAt returns the value at loc inside v.
func valueAt(v any, loc []string) any {
	for _, tok := range loc {
		switch x := v.(type) {
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		case map[string]any:
			v = x[tok]
		default:
			return nil
		}
	}
	return v
}

var englishPrinter = message.NewPrinter(language.English)

// problemReason is the text of one problem; root is the argument's value,
// for the numbers the message quotes as written.
func (a *argSchema) problemReason(e *jsonschema.ValidationError, root any) string {
	got := func() string {
		if n, ok := valueAt(root, e.InstanceLocation).(json.Number); ok {
			return string(n)
		}
		return "the value"
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		return "has type " + jsonType(valueAt(root, e.InstanceLocation)) + ", want " + strings.Join(k.Want, " or ")
	case *kind.Enum:
		return "is not one of the allowed values " + string(encode(literal{k.Want}))
	case *kind.Const:
		return "must be " + string(encode(literal{k.Want}))
	case *kind.Minimum:
		return got() + " must be >= " + ratString(k.Want)
	case *kind.ExclusiveMinimum:
		return got() + " must be > " + ratString(k.Want)
	case *kind.Maximum:
		return got() + " must be <= " + ratString(k.Want)
	case *kind.ExclusiveMaximum:
		return got() + " must be < " + ratString(k.Want)
	case *kind.MultipleOf:
		return got() + " is not a multiple of " + ratString(k.Want)
	case *kind.MinLength:
		return "length " + strconv.Itoa(k.Got) + " is below minLength " + strconv.Itoa(k.Want)
	case *kind.MaxLength:
		return "length " + strconv.Itoa(k.Got) + " is above maxLength " + strconv.Itoa(k.Want)
	case *kind.Pattern:
		return "does not match pattern " + strconv.Quote(k.Want)
	case *kind.MinItems:
		return "has " + strconv.Itoa(k.Got) + " items, fewer than minItems " + strconv.Itoa(k.Want)
	case *kind.MaxItems:
		return "has " + strconv.Itoa(k.Got) + " items, more than maxItems " + strconv.Itoa(k.Want)
	case *kind.UniqueItems:
		return "items " + strconv.Itoa(k.Duplicates[0]) + " and " + strconv.Itoa(k.Duplicates[1]) + " are equal (uniqueItems)"
	case *kind.Required:
		return "missing required property " + strconv.Quote(slices.Min(k.Missing))
	case *kind.AdditionalProperties:
		return "property " + strconv.Quote(slices.Min(k.Properties)) + " is not allowed"
	case *kind.FalseSchema:
		return "no value is allowed here"
	case *kind.Not:
		if not, ok := a.schemaAt(e.SchemaURL).(map[string]any); ok {
			if m, ok := not["not"].(map[string]any); ok && len(m) == 0 {
				return "no value is allowed here" // the converter's false schema
			}
		}
		return "matches a schema it must not match"
	case *kind.AnyOf:
		first := anyOfBranch(e, 0)
		if first == nil {
			return "matches none of the allowed alternatives"
		}
		leaf := firstProblem(first)
		rel := leaf.InstanceLocation[len(e.InstanceLocation):]
		inner := &validationError{path: instancePath(valueAt(root, e.InstanceLocation), rel), reason: a.problemReason(leaf, root)}
		return "matches none of the allowed alternatives (first: " + inner.Error() + ")"
	}
	return e.ErrorKind.LocalizedString(englishPrinter)
}

// schemaAt returns the part of a's document that url (a's URL, "#", a
// JSON pointer) names, or nil.
func (a *argSchema) schemaAt(url string) any {
	ptr, ok := strings.CutPrefix(url, a.url+"#")
	if !ok {
		return nil
	}
	v := a.doc
	for tok := range strings.SplitSeq(strings.TrimPrefix(ptr, "/"), "/") {
		if tok == "" {
			continue
		}
		if u, err := neturl.PathUnescape(tok); err == nil {
			tok = u
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		v = valueAt(v, []string{tok})
	}
	return v
}

// jsonType names the JSON Schema type of a decoded value; a number without
// a fraction is an "integer" (2020-12 §6.1.1: 1.0 is one).
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			return "integer" // the usual literal, without the exact check's allocation
		}
		if r, ok := new(big.Rat).SetString(string(x)); ok && r.IsInt() {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// anyOfBranch returns the cause of an anyOf error that comes from branch
// i, or the first cause when none says.
func anyOfBranch(e *jsonschema.ValidationError, i int) *jsonschema.ValidationError {
	suffix := "/anyOf/" + strconv.Itoa(i)
	for _, c := range e.Causes {
		if strings.HasSuffix(c.SchemaURL, suffix) {
			return c
		}
	}
	if len(e.Causes) > 0 {
		return e.Causes[0]
	}
	return nil
}

// ratString writes a schema's bound as the shortest decimal that reads
// back as the same float64, as the document most likely wrote it.
func ratString(r interface{ Float64() (float64, bool) }) string {
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
