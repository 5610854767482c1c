package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// DefaultMaxNameLength is the default cap on tool name length (64 characters, the length every known MCP client accepts).
const DefaultMaxNameLength = 64

// LoadOptions configures Load. The zero value is valid.
type LoadOptions struct {
	// API names the document among several served on one endpoint
	// (federation, docs/apis.md): each generated tool name gets the prefix
	// "<API>_", capped with it by N5 so that the prefix is never cut, and
	// Tool.API is set. Names given by x-mcp-name or Select.Names are used
	// as given. Selection globs match the names without the prefix. It
	// must be a valid tool name start (a letter, then A-Z a-z 0-9 _).
	// Empty: a single document, names unprefixed.
	API string
	// MaxNameLength caps tool names (N5). Zero means DefaultMaxNameLength.
	MaxNameLength int
	// Served holds the tool names an earlier load of the same document
	// served, by operation ([ServedKey]), when reloading it (N6 across
	// reloads): an operation whose wanted name is unchanged keeps the name
	// it was served under, a "_2" included, and a name served for an
	// operation that is gone is given to no other operation by N6, so that
	// a client holding the earlier tools/list never calls another
	// operation under an old name. [ServedNames] builds it. Nil on a
	// first load.
	Served map[string]string
	// NameStyle is how N1 turns operationIds into names: NameSnake (""),
	// NameKebab or NameAsIs.
	NameStyle string
	// StrictArguments closes every tool's input schema at its root
	// ("additionalProperties": false), so that clients and models see that
	// no other argument is taken. A call with an argument the operation
	// does not take is refused either way (checkArgs, R7).
	StrictArguments bool
	// Upstream overrides the document-level server (C20). An override with
	// only scheme and host ("http://127.0.0.1:9000") keeps the path of the
	// document's server ("/v1") and resolves relative server URLs against
	// itself; an override with a path ("https://api.example.com/v2")
	// replaces the document-level server URL entirely. Operation- and
	// path-level servers still apply. Empty means: use the document's servers.
	//
	// With Upstream set, callers' keys go only to hosts the operator named:
	// an operation whose operation- or path-level server is on another host
	// is never served unless that host is listed in UpstreamHosts (strict
	// mode: Load fails; lenient mode: the operation is dropped with a
	// problem). The error is an *UpstreamHostError.
	Upstream string
	// DefaultSecurity places the caller's key for operations whose
	// document declares no security at all (neither the document nor the
	// operation has a security requirement; an explicit "security: []"
	// stays public): "header:<Name>" (the key as the header's value),
	// "header:Authorization:Bearer" (Authorization: Bearer <key>),
	// "query:<name>", "cookie:<name>", "bearer" or "basic". Empty: such
	// operations get no credential. Load fails on another form.
	DefaultSecurity string
	// CredentialParameters names parameters (query, header or cookie) that
	// the document declares as ordinary parameters but that carry the API
	// key (fdic-bankfind's api_key query parameter): they are left out of
	// the input schema and filled from the caller's key.
	CredentialParameters []string
	// RelativeServers keeps a relative server URL that nothing resolves (no
	// Upstream, a document read from a file) as the tool's ServerURL
	// ("/api/v1") instead of failing the operation: enough to list and
	// check tools. Such a tool cannot be called; serve refuses to start
	// with one (see Document.RelativeServer).
	RelativeServers bool
	// UpstreamHosts lists further hosts ("host" or "host:port",
	// case-insensitive; a host without port matches every port) that
	// operation- and path-level servers may name when Upstream is set; "*"
	// allows every host the document names. Nil: only the upstream's host.
	UpstreamHosts []string
	// HTTPClient fetches documents given as http(s) URLs. Nil means a client
	// with a 30 s timeout.
	HTTPClient *http.Client
	// Logger receives warnings (renamed tools, skipped items). Nil discards.
	Logger *slog.Logger
	// ServerVariables sets values for server URL variables (C20), by
	// variable name. A variable that is not set takes its default; a value
	// outside the variable's enum fails Load with an error naming the
	// variable and the allowed values. Nil means: all defaults.
	ServerVariables map[string]string
	// SchemaBudget caps the serialized size of each tool's input and output
	// schema in bytes (S2). Past it, the deepest nested object schemas are
	// replaced level by level with a placeholder; if even the root's direct
	// properties are too big, long descriptions and enums are shortened
	// and then the largest top-level properties replaced, each with a
	// marker in the schema text. Zero means DefaultSchemaBudget; -1
	// disables the cap.
	SchemaBudget int
	// OutputSchemaBudget caps each tool's output schema, in bytes, the same
	// way (S2). Zero means DefaultOutputSchemaBudget; -1 disables the cap.
	OutputSchemaBudget int
	// MaxDescriptionLength caps a tool's description in characters (S10):
	// a longer one is cut at the last white space before the cap and ends
	// with " …". Zero means DefaultMaxDescriptionLength; -1 disables the cap.
	MaxDescriptionLength int
	// NoOutputSchemas leaves every tool without an OutputSchema. False: a
	// tool whose 2xx response is a JSON object gets one (R8).
	NoOutputSchemas bool
	// SchemaDefs emits each named component schema a tool uses once under
	// the schema's "$defs", referenced as {"$ref":"#/$defs/<Name>"}, for
	// clients that resolve local references; recursion becomes a real
	// $ref. The root stays an inlined object (S1, S5). A tool whose schema
	// with $defs is over SchemaBudget gets the inlined schema instead.
	// False (the default) inlines every reference (S2).
	SchemaDefs bool
	// RefRoot is the folder that external $refs must stay inside (C02). It
	// must contain the document. Empty means the document's own folder.
	// Documents loaded from http(s) URLs ignore it: their refs must stay
	// under the document's URL folder.
	RefRoot string
	// ReadFromURI, if set, reads every document Load opens other than the
	// root: external $ref targets that passed the confinement check (C02).
	// Tests use it as a spy. Nil means: files are read from disk and http(s)
	// documents with HTTPClient.
	ReadFromURI func(ctx context.Context, u *url.URL) ([]byte, error)
	// Select chooses which operations become tools and may name them
	// explicitly (see Selection). The zero value keeps every operation.
	Select Selection
	// Lenient, when the document does not load as published, skips what is
	// broken (unresolvable or malformed references, nodes of the wrong type,
	// operations that cannot be built) and serves the rest, with one Warn log
	// and one Document.Problems entry per skipped item. False (strict) fails
	// the load; the *LoadError then lists every problem found.
	Lenient bool
	// Overlays are OpenAPI Overlay 1.0 documents (file paths or http(s)
	// URLs), applied in order to the document before it is loaded. An action
	// whose target matches nothing is a warning; a malformed overlay fails
	// Load with an error naming the overlay and the action index.
	Overlays []string
}

// DefaultSchemaBudget is the default per-tool schema size cap in bytes (S2).
const DefaultSchemaBudget = 32 << 10

// DefaultMaxDescriptionLength is the default cap on a tool description,
// in characters (S10): OpenAI-API hosts refuse a whole request whose tool
// list has a longer one.
const DefaultMaxDescriptionLength = 1024

// DefaultOutputSchemaBudget is the default size cap of one tool's output
// schema in bytes. An output schema only describes results (R8), and every
// client pays for it in each tools/list; deeper structure is cut as S2 cuts
// input schemas. The full response still arrives as text.
const DefaultOutputSchemaBudget = 4 << 10

// Document is a loaded OpenAPI document turned into tools.
type Document struct {
	// API is LoadOptions.API: the document's name among several served
	// on one endpoint; "" for a single document.
	API         string
	Title       string
	Version     string // info.version
	Description string
	// Tools in N6 order: paths sorted by byte order, then methods in the
	// order get, put, post, delete, options, head, patch, trace.
	Tools []*Tool
	// Problems lists what was repaired, skipped or only warned about while
	// loading (overlay actions that matched nothing; in lenient mode every
	// dropped or rewritten node, reference and operation), in the order
	// found. Empty for a document that loads cleanly.
	Problems []Problem

	kin *openapi3.T // the document as loaded, for JSON
}

// JSON is the document as loaded, encoded as JSON (OpenAPI 3; a Swagger
// 2.0 document after its conversion), for serving it back to clients.
// References into other files of a multi-file document stay references.
func (d *Document) JSON() ([]byte, error) {
	if d.kin == nil {
		return nil, errors.New("no document")
	}
	return json.Marshal(d.kin)
}

// Load reads the document at location (a file path or an http(s) URL;
// JSON or YAML; Swagger 2.0, OAS 3.0 or 3.1) and returns its tools.
// Errors name the file and the location of the defect.
func Load(ctx context.Context, location string, opts LoadOptions) (*Document, error) {
	return load(ctx, location, opts)
}

// Tool is one operation turned into an MCP tool.
type Tool struct {
	Name         string // N1–N6, matches ^[a-zA-Z0-9_-]{1,64}$
	API          string // LoadOptions.API of its document; "" for a single document
	OperationID  string // as written in the document; may be empty
	Method       string // upper case: GET, POST, …
	PathTemplate string // as written in the document: /users/{userId}
	Title        string // summary; may be empty
	// Description is never empty: summary + "\n\n" + description when
	// both exist and differ, else summary, else description, else
	// "<METHOD> <path>".
	Description string
	Tags        []string
	// InputSchema is the JSON Schema of the arguments (B1–B5, S1–S8),
	// serialized; its root is always {"type":"object","properties":{…}}.
	InputSchema json.RawMessage
	// OutputSchema is the 2xx response schema when it is an object; nil
	// otherwise. It describes and does not constrain (R8): no required,
	// enum, pattern, format or bounds, and every value below the root may be
	// null. ConformStructured makes a response body fit it.
	OutputSchema json.RawMessage
	// Annotations (annotations.go): from the method (GET/HEAD read-only,
	// DELETE destructive and idempotent, PUT idempotent), then the
	// operation's x-mcp-annotations / x-restmcp-annotations, then
	// tool_annotations. OpenWorld is nil unless one of those sets it (MCP's
	// default is true).
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   *bool
	// RequiresCredential is true when no alternative of the operation's
	// security requirement can be satisfied without a caller key.
	RequiresCredential bool
	// StartsJobs is true when the operation declares a 202 Accepted
	// response: it may start a job that runs after the call answers.
	StartsJobs bool
	// Cost is the operation's `x-restmcp-cost` extension: the units one call
	// counts against a plan's quotas. Zero when the extension is absent; a
	// plans file may override it per tool.
	Cost int64
	// ServerURL is the resolved base URL the operation is sent to.
	ServerURL string
	// CredentialPlacement says where the caller's key goes, for the startup
	// summary: "apiKey header X-Api-Key", "http bearer", "query api_key
	// (credential_parameters)", "none (document declares no security)",
	// "none (security: [])", …
	CredentialPlacement string

	plan     *requestPlan
	wanted   string       // the N1–N5 name or the override, before N6 suffixes
	outShape *outputShape // OutputSchema parsed for ConformStructured, on first use
	// responseHeaders are the headers the 2xx responses declare
	// (declaredHeaders); headersMember the structuredContent member that
	// holds them ("" when the output schema has none).
	responseHeaders []string
	headersMember   string
}

// NewRequest builds the upstream request for one tools/call: args is the
// JSON object of arguments as the client sent it, key the caller's API key
// ("" when none was presented). The key is placed where the operation's
// security requirement says (C25). It returns an *ArgumentError for invalid
// arguments (R7) and a *CredentialError when the operation needs a key that
// is missing; nothing is sent in either case.
func (t *Tool) NewRequest(ctx context.Context, args json.RawMessage, key string) (*http.Request, error) {
	return t.plan.newRequest(ctx, args, key, "")
}

// NewRequestPresented is NewRequest for a key the caller presented with an
// authentication scheme ("Bearer" for "Authorization: Bearer <key>"): an
// apiKey scheme placed in the Authorization header then receives the value
// as presented, scheme included ("Bearer <key>"), as an API that declares
// its bearer token as an apiKey (Kubernetes) expects. Other placements get
// the key alone.
func (t *Tool) NewRequestPresented(ctx context.Context, args json.RawMessage, key, scheme string) (*http.Request, error) {
	return t.plan.newRequest(ctx, args, key, scheme)
}

// ArgumentError reports an invalid tools/call argument (R7).
type ArgumentError struct {
	Param  string // property key in the input schema; "" when the whole object is wrong
	Reason string
}

// Error returns "invalid arguments: <param>: <reason>".
func (e *ArgumentError) Error() string {
	if e.Param == "" {
		return "invalid arguments: " + e.Reason
	}
	return "invalid arguments: " + e.Param + ": " + e.Reason
}

// CredentialError reports that the operation needs a caller key and none was presented.
type CredentialError struct {
	Schemes []string // security scheme names that could have been satisfied, e.g. "headerKey (X-API-Key in header)"
}

// Error returns "missing credentials: …" naming the schemes.
func (e *CredentialError) Error() string {
	s := "missing credentials: this operation needs an API key for "
	for i, n := range e.Schemes {
		if i > 0 {
			s += " or "
		}
		s += n
	}
	return s
}

// LoadData is Load for a document already in memory. location names it in
// error messages and is the base for relative server URLs and $refs; it may
// be a file path, an http(s) URL, or "" (then external $refs are refused).
func LoadData(ctx context.Context, data []byte, location string, opts LoadOptions) (*Document, error) {
	return loadData(ctx, data, location, opts)
}

// RespondsJSON reports whether the operation's 2xx answers are JSON: the
// first media type its Accept header lists (Q9, JSON types first) is
// application/json or a +json type.
func (t *Tool) RespondsJSON() bool {
	if t.plan == nil {
		return false
	}
	first, _, _ := strings.Cut(t.plan.accept, ",")
	return mediaRank(first) <= 1
}
