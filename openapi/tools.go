package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// methodOrder is the N6 order of operations within one path.
var methodOrder = [...]string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}

// builder turns one resolved document into tools.
type builder struct {
	doc      *openapi3.T
	src      *source
	opts     LoadOptions
	log      *slog.Logger
	order    *keyOrder
	names    map[*openapi3.Schema]string // component schema → its name, for S2/S3 texts
	formats  map[string]string           // Swagger 2.0 collectionFormat by paramKey
	swagger2 bool
	budget   int
	maxName  int
	// configAnnotations is Selection.Annotations parsed, by operationId
	// (selectOperations fills it).
	configAnnotations map[string]*Annotations
	// renamedKeys is set once a request schema of the document renamed a
	// nested property key (P2); until then no rename tree is looked for.
	renamedKeys bool
	// defaultCred is LoadOptions.DefaultSecurity parsed; nil when unset.
	defaultCred *credential
	// cur is the operation tool() is building, for warn; warnings are the
	// problems found while building, added to Document.Problems.
	cur      struct{ method, path string }
	warnings []Problem
	schemaCache
}

func newBuilder(doc *openapi3.T, src *source, opts LoadOptions, order *keyOrder) *builder {
	b := &builder{doc: doc, src: src, opts: opts, log: ensureLogger(opts.Logger), order: order,
		names: map[*openapi3.Schema]string{}, schemaCache: newSchemaCache(),
		budget: opts.SchemaBudget, maxName: opts.MaxNameLength}
	if b.budget == 0 {
		b.budget = DefaultSchemaBudget
	}
	if b.maxName <= 0 {
		b.maxName = DefaultMaxNameLength
	}
	if b.maxName < minNameLength {
		b.maxName = minNameLength
	}
	if doc.Components != nil {
		for n, s := range doc.Components.Schemas {
			if s != nil && s.Value != nil {
				if old, ok := b.names[s.Value]; !ok || n < old {
					b.names[s.Value] = n
				}
			}
		}
	}
	return b
}

// withCache returns a copy of b with an empty schema cache of its own; it
// shares everything else, which is read-only once newBuilder returns
// (renamedKeys is the builder's own: only request conversions set it).
func (b *builder) withCache() *builder {
	c := *b
	c.schemaCache = newSchemaCache()
	return &c
}

// operations lists a path item's operations in N6 order; methods outside
// the fixed eight (OAS 3.2 additionalOperations) follow in byte order.
func operations(item *openapi3.PathItem) ([]string, []*openapi3.Operation) {
	all := item.Operations()
	var ms []string
	var ops []*openapi3.Operation
	for _, m := range methodOrder {
		if op := all[m]; op != nil {
			ms = append(ms, m)
			ops = append(ops, op)
		}
	}
	var extra []string
	for m := range all {
		if !slices.Contains(methodOrder[:], m) {
			extra = append(extra, m)
		}
	}
	slices.Sort(extra)
	for _, m := range extra {
		ms = append(ms, m)
		ops = append(ops, all[m])
	}
	return ms, ops
}

func (b *builder) build() (*Document, error) {
	d := &Document{kin: b.doc, API: b.opts.API}
	if info := b.doc.Info; info != nil {
		d.Title, d.Version, d.Description = info.Title, info.Version, info.Description
	}
	var errs []error
	if b.doc.Paths == nil {
		return d, nil
	}
	if err := b.checkServerVariables(); err != nil {
		return nil, fmt.Errorf("loading %s: %w", b.src.name, err)
	}
	var err error
	if b.defaultCred, err = parseDefaultSecurity(b.opts.DefaultSecurity); err != nil {
		return nil, fmt.Errorf("loading %s: %w", b.src.name, err)
	}
	paths := b.doc.Paths.Keys()
	slices.Sort(paths)
	kept, problems, err := b.selectOperations(paths)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", b.src.name, err)
	}
	d.Problems = append(d.Problems, problems...)
	// Response schemas are converted on a second goroutine while this one
	// builds the rest of each tool. The two sides never share conversion
	// results (memoKey, defKey and defNameKey all carry the request flag),
	// so each side gets a cache of its own and sees its operations in the
	// same N6 order as a serial build: the output is identical.
	outputs := make([][]byte, len(kept))
	responses := b.withCache()
	responses.budget = b.opts.OutputSchemaBudget
	if responses.budget == 0 {
		responses.budget = DefaultOutputSchemaBudget
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, e := range kept {
			outputs[i] = responses.output(e.op)
		}
	}()
	var built []*selected
	var builtIdx []int
	for i, e := range kept {
		t, err := b.tool(e.path, e.item, e.method, e.op)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s (%s): %w", e.method, e.path, pointer("paths", e.path, strings.ToLower(e.method)), err))
			if b.opts.Lenient {
				d.Problems = append(d.Problems, Problem{Severity: SeverityError, File: b.src.rootName(),
					Pointer:   strings.TrimPrefix(pointer("paths", e.path, strings.ToLower(e.method)), "#"),
					Operation: e.method + " " + e.path, Message: err.Error() + "; operation dropped"})
			}
			continue
		}
		t.wanted = e.wanted
		d.Tools = append(d.Tools, t)
		built = append(built, e)
		builtIdx = append(builtIdx, i)
	}
	<-done
	for j, i := range builtIdx {
		t := d.Tools[j]
		t.responseHeaders = declaredHeaders(kept[i].op)
		t.OutputSchema, t.headersMember = withHeadersMember(outputs[i], t.responseHeaders)
		t.outShape = &outputShape{}
	}
	// Lenient mode drops the operations that fail, unless all of them do:
	// that is a setting to fix (a relative server URL without --upstream,
	// say), not a document to serve with no tools.
	if err := errors.Join(errs...); err != nil && (!b.opts.Lenient || len(d.Tools) == 0) {
		return nil, fmt.Errorf("loading %s: %w", b.src.name, err)
	}
	d.Problems = append(d.Problems, b.warnings...)
	// Names are assigned once the tools exist, so that an operation
	// dropped in lenient mode takes no name (N6 within what is served).
	for i, name := range b.assignNames(built) {
		d.Tools[i].Name = name
		d.Tools[i].plan.tool = name
	}
	return d, nil
}

// pointer builds an RFC 6901 JSON pointer from unescaped tokens.
func pointer(tokens ...string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(escapeToken(t))
	}
	return "#" + sb.String()
}

// tool builds the tool for one selected operation. Its Name (assignNames)
// and OutputSchema (output, on the response side) are set by build.
// warn records a warning about the operation being built: a problem of
// the document (Document.Problems, which validate prints and counts and
// Load logs once), not a bare log line.
func (b *builder) warn(msg string) {
	b.warnings = append(b.warnings, Problem{Severity: SeverityWarning, File: b.src.rootName(),
		Pointer:   strings.TrimPrefix(pointer("paths", b.cur.path, strings.ToLower(b.cur.method)), "#"),
		Operation: b.cur.method + " " + b.cur.path, Message: msg})
}

func (b *builder) tool(path string, item *openapi3.PathItem, method string, op *openapi3.Operation) (*Tool, error) {
	b.cur.method, b.cur.path = method, path
	t := &Tool{
		API:          b.opts.API,
		OperationID:  op.OperationID,
		Method:       method,
		PathTemplate: path,
		Title:        op.Summary,
		Description:  op.Summary,
		Tags:         slices.Clone(op.Tags),
		ReadOnly:     method == http.MethodGet || method == http.MethodHead,
		Destructive:  method == http.MethodDelete,
		Idempotent:   method == http.MethodPut || method == http.MethodDelete,
		StartsJobs:   op.Responses != nil && op.Responses.Value("202") != nil,
	}
	cost, err := extensionCost(op.Extensions)
	if err != nil {
		return nil, err
	}
	if err := annotate(t, op, b.configAnnotations[op.OperationID]); err != nil {
		// A document's defect: strict refuses it; lenient keeps the
		// operation with the method's annotations, and says so.
		if !b.opts.Lenient {
			return nil, err
		}
		b.warn(err.Error() + "; the extension is left out")
	}
	t.Cost = cost
	// Models read the description, clients show the title: when both texts
	// exist and differ, the description carries both, summary first.
	if sum, desc := strings.TrimSpace(op.Summary), strings.TrimSpace(op.Description); sum != "" && desc != "" && sum != desc {
		t.Description = sum + "\n\n" + desc
	}
	if t.Description == "" {
		t.Description = op.Description
	}
	if t.Description == "" {
		t.Description = method + " " + path
	}
	t.Description = cutDescription(t.Description, b.maxDescription())
	server, err := b.server(item, op)
	if err != nil {
		return nil, err
	}
	t.ServerURL = server
	sec, err := b.security(op)
	if err != nil {
		return nil, err
	}
	plan, in, err := b.inputs(path, item, method, op, sec)
	if err != nil {
		return nil, err
	}
	t.RequiresCredential = sec.keyRequired
	t.CredentialPlacement = sec.placement
	plan.method = method
	plan.base = server
	plan.sec = sec
	plan.accept = acceptOf(op)
	t.plan = plan
	plan.idempotency = plan.idempotencyParam()
	if b.opts.StrictArguments {
		in = closeObject(in)
	}
	t.InputSchema = in
	plan.inputSchema = in
	return t, nil
}

// acceptOf is the Accept header of an operation's upstream requests (Q9):
// the media types of its 2xx responses, JSON types first, then the others
// in byte order; "*/*" when none are declared.
func acceptOf(op *openapi3.Operation) string {
	var json, other []string
	if op.Responses != nil {
		for code, r := range op.Responses.Map() {
			if len(code) != 3 || code[0] != '2' || r == nil || r.Value == nil {
				continue
			}
			for mt := range r.Value.Content {
				mt = strings.TrimSpace(mt)
				l := &other
				if mediaRank(mt) <= 1 {
					l = &json
				}
				if mt != "" && !slices.Contains(*l, mt) {
					*l = append(*l, mt)
				}
			}
		}
	}
	slices.Sort(json)
	slices.Sort(other)
	if all := append(json, other...); len(all) > 0 {
		return strings.Join(all, ", ")
	}
	return "*/*"
}

// mediaRank orders request media types per B5; -1 means unsupported.
func mediaRank(mt string) int {
	mt = strings.ToLower(strings.TrimSpace(strings.SplitN(mt, ";", 2)[0]))
	switch {
	case mt == "application/json":
		return 0
	case strings.HasSuffix(mt, "+json"):
		return 1
	case mt == "application/x-www-form-urlencoded":
		return 2
	case mt == "multipart/form-data":
		return 3
	case mt == "text/plain":
		return 4
	case mt == "application/octet-stream":
		return 5
	case strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "/xml") || strings.HasSuffix(mt, "+xml"):
		return 6
	case mt == "*/*" || mt == "application/*":
		return 7
	}
	return 8
}

// pickMedia returns the preferred media type of content (B5); ties are
// broken by byte order so the choice is deterministic.
func pickMedia(content openapi3.Content) (string, *openapi3.MediaType) {
	best, rank := "", 1<<30
	for mt := range content {
		r := mediaRank(mt)
		if r < rank || r == rank && mt < best {
			best, rank = mt, r
		}
	}
	if best == "" {
		return "", nil
	}
	return best, content[best]
}

// output returns the serialized 2xx response schema when it is an object.
func (b *builder) output(op *openapi3.Operation) []byte {
	if op.Responses == nil || b.opts.NoOutputSchemas {
		return nil
	}
	codes := []string{}
	for code := range op.Responses.Map() {
		if len(code) == 3 && code[0] == '2' {
			codes = append(codes, code)
		}
	}
	slices.SortFunc(codes, func(a, c string) int {
		// Exact codes before the "2XX" range.
		ax, cx := strings.ContainsAny(a, "xX"), strings.ContainsAny(c, "xX")
		if ax != cx {
			if ax {
				return 1
			}
			return -1
		}
		return strings.Compare(a, c)
	})
	for _, code := range codes {
		r := op.Responses.Value(code)
		if r == nil || r.Value == nil || len(r.Value.Content) == 0 {
			continue
		}
		mt, m := pickMedia(r.Value.Content)
		if mediaRank(mt) > 1 || m == nil || m.Schema == nil || m.Schema.Value == nil {
			return nil
		}
		out := b.fit(func(c *converter) *obj {
			c.request = false
			return c.ref(m.Schema, 0, "", true) // R8 as it converts (describe.go)
		})
		if !objectRoot(out) {
			return nil
		}
		return out
	}
	return nil
}

// closeObject adds "additionalProperties": false to an input schema's root
// (LoadOptions.StrictArguments), unless the root already says what other
// members may be.
func closeObject(in json.RawMessage) json.RawMessage {
	ms, ok := jsonvalue.Members(in)
	if !ok {
		return in
	}
	for _, m := range ms {
		if m.Key == "additionalProperties" || m.Key == "unevaluatedProperties" {
			return in
		}
	}
	return jsonvalue.AppendMember(in, "additionalProperties", []byte("false"))
}
