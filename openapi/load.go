package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/restmcp/restmcp/internal/jsonvalue"
	"github.com/restmcp/restmcp/internal/yamltree"
)

// maxDocumentBytes caps one document read from disk or the network.
const maxDocumentBytes = 256 << 20

// defaultFetchTimeout is the timeout of the client used when
// LoadOptions.HTTPClient is nil.
const defaultFetchTimeout = 30 * time.Second

// load reads the root document and hands it to loadData.
func load(ctx context.Context, location string, opts LoadOptions) (*Document, error) {
	var data []byte
	var err error
	if isHTTPURL(location) {
		data, err = fetch(ctx, httpClient(opts), location)
	} else {
		data, err = readFile(location)
	}
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", location, err)
	}
	return loadData(ctx, data, location, opts)
}

func isHTTPURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

func httpClient(opts LoadOptions) *http.Client {
	if opts.HTTPClient != nil {
		return opts.HTTPClient
	}
	return &http.Client{Timeout: defaultFetchTimeout}
}

func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Sized from the file (as os.ReadFile does): a document of megabytes is
	// read into one buffer, not one that doubles and is cleared each time.
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() <= maxDocumentBytes {
		size = int(fi.Size()) + 1 // +1: the read that sees EOF
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(data) > maxDocumentBytes {
			break
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // grows; the file grew since Stat
		}
	}
	if len(data) > maxDocumentBytes {
		return nil, fmt.Errorf("document larger than %d bytes", maxDocumentBytes)
	}
	return data, nil
}

func fetch(ctx context.Context, c *http.Client, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDocumentBytes {
		return nil, fmt.Errorf("GET %s: document larger than %d bytes", u, maxDocumentBytes)
	}
	return data, nil
}

// source describes where the root document came from: the base for
// relative $refs (confined to its folder, C02) and relative server URLs (C20).
type source struct {
	name    string   // location as given, for error messages; "<data>" when empty
	url     *url.URL // nil when the location is empty
	dir     string   // file: absolute folder of the root document
	httpDir string   // http(s): URL of the root document's folder, ending in "/"
	// repaired, in the lenient pass, returns the repaired bytes of a
	// referenced document; nil (or a nil result) means: read it as usual.
	repaired func(u *url.URL) []byte
}

func newSource(location, refRoot string) (*source, error) {
	s := &source{name: location}
	switch {
	case location == "":
		s.name = "<data>"
	case isHTTPURL(location):
		u, err := url.Parse(location)
		if err != nil {
			return nil, err
		}
		s.url = u
		d := *u
		d.RawQuery, d.Fragment = "", ""
		d.Path = path.Dir(u.Path)
		if !strings.HasSuffix(d.Path, "/") {
			d.Path += "/"
		}
		d.RawPath = ""
		s.httpDir = d.String()
	default:
		abs, err := filepath.Abs(location)
		if err != nil {
			return nil, err
		}
		s.url = &url.URL{Path: filepath.ToSlash(abs)}
		s.dir = filepath.Dir(abs)
		if refRoot != "" {
			root, err := filepath.Abs(refRoot)
			if err != nil {
				return nil, err
			}
			if rel, err := filepath.Rel(root, s.dir); err != nil || strings.HasPrefix(rel, "..") {
				return nil, fmt.Errorf("ref root %s does not contain the document", refRoot)
			}
			s.dir = root
		}
	}
	return s, nil
}

// refReader returns the kin-openapi reader for documents other than the
// root. It enforces C02 before anything is read: a file must lie inside
// the root document's folder (after resolving symlinks), an http(s)
// document must lie under the root document's URL folder, and everything
// else (absolute paths outside the root, other hosts, other schemes) is
// refused with an error naming the target.
func (s *source) refReader(ctx context.Context, opts LoadOptions, order *keyOrder, repairs *[]Problem) openapi3.ReadFromURIFunc {
	var mu sync.Mutex
	scanned := map[string]bool{}
	return func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		if s.repaired != nil {
			// The lenient pass read and confined these files already;
			// kin-openapi asks for some of them thousands of times.
			if data := s.repaired(u); data != nil {
				mu.Lock()
				first := !scanned[u.Path]
				scanned[u.Path] = true
				mu.Unlock()
				if first {
					order.scan(data)
				}
				return data, nil
			}
		}
		if err := s.confine(u); err != nil {
			return nil, err
		}
		var data []byte
		var err error
		switch {
		case opts.ReadFromURI != nil:
			data, err = opts.ReadFromURI(ctx, u)
		case u.Scheme == "http" || u.Scheme == "https":
			data, err = fetch(ctx, httpClient(opts), u.String())
		default:
			data, err = readFile(filepath.FromSlash(u.Path))
		}
		if err != nil {
			return nil, err
		}
		if jsonvalue.LooksLikeObject(data) {
			var fixed []Problem
			data, fixed = wellFormed(data, s.relName(u))
			mu.Lock()
			*repairs = append(*repairs, fixed...)
			mu.Unlock()
		}
		order.scan(data)
		return data, nil
	}
}

// RefError reports a $ref that Load refuses to follow (C02): one that
// leaves the spec's folder, an absolute path outside it, or a remote URL.
type RefError struct {
	Target string // the ref target, relative to the spec's folder where that applies
	Reason string
}

// Error returns "$ref <target>: <reason>".
func (e *RefError) Error() string {
	return fmt.Sprintf("$ref %q: %s", e.Target, e.Reason)
}

func (s *source) confine(u *url.URL) error {
	switch u.Scheme {
	case "http", "https":
		if s.httpDir != "" {
			c := *u
			c.Fragment = ""
			if strings.HasPrefix(c.String(), s.httpDir) && !strings.Contains(c.Path, "/../") {
				return nil
			}
		}
		return &RefError{Target: u.String(), Reason: "remote references are refused; only files inside the spec's folder may be referenced"}
	case "", "file":
	default:
		return &RefError{Target: u.String(), Reason: "unsupported reference scheme"}
	}
	if s.dir == "" {
		if s.httpDir != "" {
			return &RefError{Target: u.String(), Reason: "points outside the spec root (a document fetched over http(s) may only reference documents under its own URL folder)"}
		}
		return &RefError{Target: u.Path, Reason: "external references need a document location; none was given"}
	}
	p := filepath.Clean(filepath.FromSlash(u.Path))
	rel, err := filepath.Rel(s.dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		if err == nil && strings.Count(rel, "..") <= 2 {
			return &RefError{Target: filepath.ToSlash(rel), Reason: "points outside the spec root " + s.dir + " (" + p + ")"}
		}
		return &RefError{Target: u.Path, Reason: "points outside the spec root " + s.dir}
	}
	// A symlink inside the folder must not lead outside it.
	if real, err := filepath.EvalSymlinks(p); err == nil {
		if realDir, err := filepath.EvalSymlinks(s.dir); err == nil {
			r, err := filepath.Rel(realDir, real)
			if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				return &RefError{Target: filepath.ToSlash(rel), Reason: "is a symlink that points outside the spec root " + s.dir}
			}
		}
	}
	return nil
}

// loadData applies the overlays, then parses, converts and resolves the
// document and builds tools. When that fails it runs the lenient pass
// (lenient.go): in lenient mode to serve what can be served, in strict mode
// only to list every problem in the returned *LoadError.
func loadData(ctx context.Context, data []byte, location string, opts LoadOptions) (*Document, error) {
	if a := opts.API; a != "" && (!isToolName(a, DefaultMaxNameLength) || !(a[0] >= 'a' && a[0] <= 'z' || a[0] >= 'A' && a[0] <= 'Z')) {
		return nil, fmt.Errorf("loading %s: API name %q must start with a letter and hold only A-Z a-z 0-9 _ -", location, a)
	}
	src, err := newSource(location, opts.RefRoot)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", location, err)
	}
	log := ensureLogger(opts.Logger)
	var problems []Problem
	if len(opts.Overlays) > 0 {
		data, problems, err = applyOverlays(ctx, data, src, opts)
		if err != nil {
			return nil, fmt.Errorf("loading %s: %w", src.name, err)
		}
	}
	d, err := parseAndBuild(ctx, data, src, opts)
	if err != nil {
		lopts := opts
		lopts.Lenient = true
		ld, lerr := loadLenient(ctx, data, src, lopts)
		// A $ref that leaves the spec root fails lenient loads too, with
		// strict mode's error.
		var breach *confinementError
		if !opts.Lenient || errors.As(lerr, &breach) {
			le := &LoadError{Location: src.name, Err: err, Problems: problems}
			if ld != nil {
				le.Problems = append(le.Problems, ld.Problems...)
			} else if lle := (*LoadError)(nil); errors.As(lerr, &lle) {
				le.Problems = append(le.Problems, lle.Problems...)
			}
			return nil, le
		}
		if lerr != nil {
			return nil, lerr
		}
		d = ld
	}
	d.Problems = append(problems, d.Problems...)
	for _, p := range d.Problems {
		log.LogAttrs(ctx, slog.LevelWarn, "openapi document problem", p.attrs()...)
	}
	switch {
	case err != nil:
		log.Warn("openapi document does not load as published; serving what loads",
			"document", src.name, "problems", len(d.Problems), "tools", len(d.Tools), "error", firstLine(err.Error()))
	case len(d.Problems) > 0:
		log.Warn("openapi document loaded with problems", "document", src.name, "problems", len(d.Problems), "tools", len(d.Tools))
	}
	return d, nil
}

// firstLine returns the first line of s, cut to 160 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// operationRefs reports the operations given as a $ref. OpenAPI does not
// allow that, but bundlers follow any $ref and some vendors rely on it
// (DigitalOcean); kin-openapi ignores such a $ref and would yield an empty
// operation, so the document is refused here and the lenient pass inlines
// the targets.
func operationRefs(doc *openapi3.T) error {
	if doc.Paths == nil {
		return nil
	}
	var errs []error
	paths := doc.Paths.Keys()
	slices.Sort(paths)
	for _, p := range paths {
		item := doc.Paths.Value(p)
		if item == nil {
			continue
		}
		ms, ops := operations(item)
		for i, op := range ops {
			if ref, ok := op.Extensions["$ref"]; ok {
				errs = append(errs, fmt.Errorf("%s %s (%s): the operation is a $ref (%v), which OpenAPI does not allow and the loader does not follow",
					ms[i], p, pointer("paths", p, strings.ToLower(ms[i])), ref))
			}
		}
	}
	return errors.Join(errs...)
}

// confinementError is loadLenient's refusal of a document whose $refs leave
// the spec root (C02): nothing is served, in any mode.
type confinementError struct{ err error }

func (e *confinementError) Error() string { return e.err.Error() }
func (e *confinementError) Unwrap() error { return e.err }

// maxLenientRetries bounds how often the lenient pass drops nodes the
// loader names in its errors and tries again.
const maxLenientRetries = 8

// loadLenient repairs the document trees (lenient.go) and loads the result.
func loadLenient(ctx context.Context, data []byte, src *source, opts LoadOptions) (*Document, error) {
	tree, err := yamltree.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", src.name, err)
	}
	r := newRepairer(src, tree)
	r.run()
	if len(r.breaches) > 0 {
		return nil, &confinementError{errors.Join(r.breaches...)}
	}
	ls := *src
	ls.repaired = r.serve
	for attempt := 0; ; attempt++ {
		d, err := parseAndBuild(ctx, yamltree.EncodeJSON(r.root.root), &ls, opts)
		if err == nil {
			d.Problems = append(r.problems, d.Problems...)
			return d, nil
		}
		if attempt == maxLenientRetries || !r.dropLoaderErrors(err) {
			return nil, &LoadError{Location: src.name, Err: err, Problems: r.problems}
		}
	}
}

// parseAndBuild parses, converts and resolves the document, then builds tools.
func parseAndBuild(ctx context.Context, data []byte, src *source, opts LoadOptions) (*Document, error) {
	order := newKeyOrder()
	published := data // for errors with the document's own lines
	if jsonvalue.LooksLikeObject(data) {
		order.scan(data)
	} else if tree, err := yamltree.Parse(data); err == nil {
		// A YAML document is parsed once, here: its node tree gives the
		// declaration order, and kin-openapi gets it as JSON, its fast path.
		order.walk(tree)
		data = yamltree.EncodeJSON(tree)
	} else if errors.Is(err, yamltree.ErrAliasBudget) {
		return nil, fmt.Errorf("loading %s: %w", src.name, err)
	}
	data, repairs := wellFormed(data, src.rootName())
	swagger2, err := openAPIKind(data)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", src.name, err)
	}

	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.IsExternalRefsAllowed = true
	var refRepairs []Problem // read by the loader's goroutines until it returns
	loader.ReadFromURIFunc = src.refReader(ctx, opts, order, &refRepairs)

	var (
		doc     *openapi3.T
		formats map[string]string
	)
	if swagger2 {
		var d2 openapi2.T
		if err := openapi2.UnmarshalFromData(data, &d2); err != nil {
			return nil, fmt.Errorf("loading %s: %w", src.name, err)
		}
		formats = collectionFormats(&d2)
		doc, err = openapi2conv.ToV3WithLoader(&d2, loader, src.url)
		if err != nil {
			return nil, fmt.Errorf("loading %s (Swagger 2.0): %w", src.name, err)
		}
	} else {
		doc, err = loadV3(loader, data, published, src, opts.Lenient)
		if err != nil {
			return nil, fmt.Errorf("loading %s: %w", src.name, err)
		}
	}
	if err := operationRefs(doc); err != nil {
		return nil, fmt.Errorf("loading %s: %w", src.name, err)
	}
	b := newBuilder(doc, src, opts, order)
	b.formats = formats
	b.swagger2 = formats != nil
	d, err := b.build()
	if err != nil {
		return nil, err
	}
	d.Problems = slices.Concat(repairs, refRepairs, d.Problems)
	return d, nil
}

// openAPIKind reads the top level of data once: whether it is a Swagger
// 2.0 document (a "swagger" member; OpenAPI 3.x says "openapi"), and an
// error for a document that is empty or is a JSON object (a YAML document
// arrives converted) with neither member: some other YAML or JSON file,
// which kin-openapi would read as a document with no operations. Text
// that is not an object (YAML that did not parse) is not refused here, the
// decoder's error says where it fails; a line that starts with the key
// tells whether it is Swagger 2.0.
func openAPIKind(data []byte) (swagger2 bool, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return false, errors.New("the document is empty")
	}
	if members, ok := jsonvalue.Members(data); ok {
		var keys []string
		declared := false
		for _, m := range members {
			swagger2 = swagger2 || m.Key == "swagger"
			declared = declared || m.Key == "openapi" || m.Key == "swagger"
			keys = append(keys, strconv.Quote(m.Key))
		}
		if declared {
			return swagger2, nil
		}
		if len(keys) > 5 {
			keys = append(keys[:5], "…")
		}
		return false, fmt.Errorf(`not an OpenAPI document: it has no top-level "openapi" (3.x) or "swagger" (2.0) member (its members: %s)`, strings.Join(keys, ", "))
	}
	for line := range bytes.Lines(data) {
		if bytes.HasPrefix(line, []byte("swagger:")) || bytes.HasPrefix(line, []byte(`"swagger":`)) || bytes.HasPrefix(line, []byte(`'swagger':`)) {
			return true, nil
		}
	}
	return false, nil
}

// loadV3 decodes an OAS 3.x document. JSON (a YAML document arrives
// converted) goes through encoding/json (kin-openapi's own UnmarshalJSON
// methods), which is an order of magnitude
// faster than kin-openapi's YAML path on multi-megabyte documents; on any
// failure the published document is loaded again through the YAML path,
// whose errors carry its line numbers and JSON pointers.
//
// In lenient mode a JSON document that decodes but does not resolve is not
// loaded again: the lenient pass names its defects itself, and the YAML
// path costs seconds on large documents (square-connect-v2: 3 MB).
func loadV3(loader *openapi3.Loader, data, published []byte, src *source, lenient bool) (*openapi3.T, error) {
	if jsonvalue.LooksLikeObject(data) {
		doc := &openapi3.T{}
		if err := json.Unmarshal(data, doc); err == nil {
			shareExternalRefs(doc, src.url, loader.ReadFromURIFunc)
			err = loader.ResolveRefsIn(doc, src.url)
			if err == nil {
				return doc, nil
			}
			var re *RefError
			if errors.As(err, &re) || lenient {
				return nil, err
			}
		}
		loader = freshLoader(loader)
	}
	if src.url == nil {
		return loader.LoadFromData(published)
	}
	return loader.LoadFromDataWithPath(published, src.url)
}

func freshLoader(l *openapi3.Loader) *openapi3.Loader {
	n := openapi3.NewLoader()
	n.Context = l.Context
	n.IsExternalRefsAllowed = l.IsExternalRefsAllowed
	n.ReadFromURIFunc = l.ReadFromURIFunc
	return n
}

// collectionFormats records every Swagger 2.0 query/header/path parameter's
// collectionFormat, keyed by paramKey(method, path, in, name), because
// openapi2conv maps a missing collectionFormat to form/explode=true while
// Swagger 2.0's default is csv (C21, Q2).
func collectionFormats(d *openapi2.T) map[string]string {
	m := map[string]string{}
	resolve := func(p *openapi2.Parameter) *openapi2.Parameter {
		if p != nil && p.Ref != "" {
			if q, ok := d.Parameters[strings.TrimPrefix(p.Ref, "#/parameters/")]; ok {
				return q
			}
		}
		return p
	}
	for pth, item := range d.Paths {
		if item == nil {
			continue
		}
		for method, op := range item.Operations() {
			for _, ps := range []openapi2.Parameters{item.Parameters, op.Parameters} {
				for _, p := range ps {
					p = resolve(p)
					if p == nil || p.Type == nil || !p.Type.Is("array") {
						continue
					}
					m[paramKey(method, pth, p.In, p.Name)] = p.CollectionFormat
				}
			}
		}
	}
	return m
}

func paramKey(method, path, in, name string) string {
	return strings.ToUpper(method) + " " + path + " " + in + " " + name
}

func ensureLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
