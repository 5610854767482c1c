package adapter

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/restmcp/restmcp/adapter/idp"
	"github.com/restmcp/restmcp/adapter/oauth"
	"github.com/restmcp/restmcp/adapter/session"
	"github.com/restmcp/restmcp/adapter/task"
	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// Defaults for the zero values of [Options].
const (
	DefaultName             = "restmcp"
	DefaultVersion          = "dev"
	DefaultMCPPath          = "/mcp"
	DefaultUpstreamTimeout  = 30 * time.Second
	DefaultMaxBodyBytes     = 1 << 20   // 1 MiB
	DefaultMaxResponseBytes = 100 << 10 // 100 KiB
	DefaultMaxBinaryBytes   = 5 << 20   // 5 MiB
	DefaultMaxDownloadBytes = 64 << 20  // 64 MiB
	DefaultMeterTimeout     = 2 * time.Second

	DefaultAsyncPollInterval = time.Second
	DefaultTaskTTL           = time.Hour
	DefaultMaxTasksPerKey    = 100
	DefaultMaxTasks          = 10_000
)

// AnonymousKeyID is the key id under which calls without a key are metered
// when [Options.AllowAnonymous] is set: they share one budget.
const AnonymousKeyID = "anonymous"

// PublicKeyID is the key id under which [Options.PublicGlobalPlan] meters
// every public call together.
const PublicKeyID = "public"

// Options configures [New]. The zero value of every field is its documented
// default.
type Options struct {
	// Tools are served one MCP tool each, in this order. Names must be unique.
	Tools []*openapi.Tool

	// Name and Version are the MCP server info reported by initialize.
	// Defaults: DefaultName, DefaultVersion.
	Name    string
	Version string
	// Instructions is sent to clients in the initialize result. Empty: none.
	Instructions string

	// MCPPath is where the Streamable HTTP endpoint is mounted.
	// Default DefaultMCPPath ("/mcp").
	MCPPath string

	// Keys maps API keys to plans: unknown and revoked keys get 401 on
	// tools/call, and a tool outside the caller's plan gets a tool error
	// (isError) without being metered or sent upstream. Nil: every key is
	// accepted, with no plan (every tool allowed; Call.Plan is nil).
	Keys KeyResolver
	// Meter admits tools/call requests per key under the caller's plan,
	// refunds, records usage events and reads usage for GET /usage. Nil: no
	// metering, no rate-limit headers (there are no values to report), and
	// GET /usage answers 404.
	Meter Meter
	// MeterTimeout bounds one key lookup, one AdmitCall, and the refund and
	// usage event written after a call; past it an admission is answered
	// 503 like any other Meter error. Zero: DefaultMeterTimeout (2 s). A
	// Meter or KeyResolver whose InMemory() reports true
	// (metering.MemoryMeter, a metering.Registry without Redis) never
	// waits, and its calls run without this deadline.
	MeterTimeout time.Duration
	// Counting is the plans' counting policy. metering.CountSuccess: an
	// admitted call whose upstream answered 5xx, could not be reached, or
	// that was never sent (invalid arguments) is refunded with
	// Meter.Refund (metering.Counting.Refunds). "" or
	// metering.CountAdmitted: every admitted call counts.
	Counting metering.Counting
	// ListByPlan makes tools/list, when the request carries a key, list only
	// the tools the key's plan allows. A request without a key, or whose key
	// cannot be resolved, gets every tool. Needs Keys.
	ListByPlan bool
	// Metrics, when set, receives restmcp's series (see the Metric*
	// constants) and is served at GET /metrics in the Prometheus text
	// format. The caller may register more collectors on it. Nil: no
	// /metrics route.
	Metrics *prometheus.Registry

	// Ready reports whether the server can take traffic; GET /ready answers
	// 503 while it returns an error. Nil: always ready.
	Ready func(ctx context.Context) error

	// HTTPClient sends upstream requests. Nil: a shared client built by
	// NewHTTPClient (connection reuse, no cookie jar, no cross-host
	// redirects). A caller-supplied client is used as is.
	HTTPClient *http.Client
	// UpstreamTimeout bounds one upstream call, from building the request to
	// the end of reading the response. Zero: DefaultUpstreamTimeout (30 s).
	// Negative: no timeout beyond the client's own.
	UpstreamTimeout time.Duration

	// MaxBodyBytes caps the MCP request body; larger bodies get 413.
	// Zero: DefaultMaxBodyBytes (1 MiB).
	MaxBodyBytes int64
	// MaxResponseBytes caps the text of one upstream response in a tool
	// result (R5); at most MaxResponseBytes+1 bytes are read from upstream.
	// Zero: DefaultMaxResponseBytes (100 KiB).
	MaxResponseBytes int
	// MaxBinaryBytes caps a binary upstream response (R4: image, audio,
	// blob). Binary bodies cannot be cut meaningfully, so a larger one gives
	// an error result naming the size. Zero: DefaultMaxBinaryBytes (5 MiB).
	MaxBinaryBytes int
	// BinaryLinkBytes, when positive, makes a GET operation's binary answer
	// larger than it a resource_link (links.go) instead of inline bytes
	// (and advertises the resources capability for reading links). Zero:
	// off; binary answers are inline up to MaxBinaryBytes.
	BinaryLinkBytes int
	// MaxDownloadBytes caps a binary answer read through a link. Zero:
	// DefaultMaxDownloadBytes (64 MiB).
	MaxDownloadBytes int
	// AsyncWait, when positive, is how long a call whose upstream answers
	// 202 with a status resource waits for the job to end (async.go),
	// within UpstreamTimeout. Zero: the 202 is the answer.
	AsyncWait time.Duration
	// AsyncPollInterval is the shortest wait between two polls of a job,
	// whatever its Retry-After says. Zero: DefaultAsyncPollInterval (1 s).
	AsyncPollInterval time.Duration
	// IdP, when set, accepts access tokens of the vendor's identity
	// provider on the MCP endpoint beside API keys (idpfront.go): the
	// caller is metered under its identity claim and the plan its plan
	// claim names, and the upstream gets the exchanged (or forwarded)
	// token. IdPResource is the MCP URL tokens are for (their audience),
	// IdPIssuer the provider the protected resource metadata names.
	IdP         *idp.Verifier
	IdPResource string
	IdPIssuer   string
	// IdPIdentityKey, when set (idp_upstream key), is the API key bound to
	// an identity provider's caller (by its key id, idp-…), which the
	// upstream gets instead of a token, and whose plan the caller is
	// metered on. Its error wraps metering.ErrUnknownKey when the identity
	// has none.
	IdPIdentityKey func(ctx context.Context, identity string) (string, error)
	// Tasks, with AsyncWait, lets jobs outlive their call (tasks.go): a
	// client with the tasks extension gets an MCP task, any other a job
	// handle for the companion tool. Nil: a job still running when the
	// wait passes is left to the model with where it is watched.
	Tasks task.Store
	// TaskTTL is how long a task is kept from its creation (its ttlMs).
	// Zero: DefaultTaskTTL (1 h).
	TaskTTL time.Duration
	// MaxTasksPerKey and MaxTasks cap the working tasks of one key and of
	// all keys; past a cap a call is waited for and gets no handle, which
	// its answer says. Zero: DefaultMaxTasksPerKey (100), DefaultMaxTasks
	// (10,000); negative: no cap.
	MaxTasksPerKey int
	MaxTasks       int
	// LinkSecret signs links (HMAC-SHA256); replicas that share it read
	// each other's links. Empty: a random secret per process.
	LinkSecret []byte

	// AllowedOrigins lists the browser origins ("https://app.example.com",
	// scheme://host[:port], compared case-insensitively) allowed to call the
	// MCP endpoint. A request without an Origin header (every non-browser
	// client) is always allowed; one whose Origin is present and not listed
	// gets 403. "*" allows every origin. Empty: an Origin is allowed only
	// when it and the request's Host are both loopback (localhost,
	// 127.0.0.0/8, ::1), so local browser tools work and DNS rebinding does not.
	AllowedOrigins []string

	// AllowAnonymous lets tools/call through without an API key. The zero
	// value (false) means a key is required: tools/call without one gets 401.
	// When true, a call without a key reaches the tool, which sends it without
	// credentials when its security allows that and answers "missing
	// credentials" otherwise (C25); such calls are metered together under
	// AnonymousKeyID.
	AllowAnonymous bool

	// PublicMode serves anonymous public reads: every tools/call is
	// anonymous, whatever credential it presents (an x-api-key, a bearer
	// token or ?api_key= never changes who the caller is, so a made-up
	// token cannot buy a fresh budget, and it is never sent upstream). The
	// caller is its client address (the TCP peer, or the X-Forwarded-For
	// hop before the first untrusted proxy when TrustedProxies are set;
	// IPv6 addresses by their /64), metered under the key id
	// AddressKeyID(address) and the plan Keys resolves for no key (the
	// default plan). Implies AllowAnonymous.
	PublicMode bool
	// PublicGlobalPlan, in public mode, is a second plan every call is also
	// admitted under, with the one key id PublicKeyID: the limits of all
	// public callers together. Nil: none.
	PublicGlobalPlan *metering.Plan
	// TrustedProxies lists the proxies (IP addresses or CIDR ranges) whose
	// X-Forwarded-For and X-Real-IP headers name the client address. Empty:
	// none; the client address is the TCP peer, and those headers are
	// ignored (anyone can send them).
	TrustedProxies []string

	// ErrorCodes replaces restmcp's own JSON-RPC error codes, for
	// deployments whose clients expect others (an earlier restmcp answered
	// -32001, -32029 and -32030). A zero field keeps its default:
	// CodeUnauthorized, CodeRateLimited, CodeUnavailable.
	ErrorCodes ErrorCodes

	// DisableFastPath sends every request through the go-sdk's handler,
	// tools/call and tools/list included. The fast path answers those two
	// on the pre-2026 wire from restmcp's own tool table with the same bytes
	// the SDK would write, at a fraction of the cost; this is the switch to
	// rule it out when diagnosing a client. False: the fast path is on.
	DisableFastPath bool

	// Compact serves three tools instead of one per operation, for APIs too
	// large to list: search_operations (a BM25F text index over names,
	// summaries, descriptions, tags, paths and parameter names),
	// describe_operation (one operation's schemas) and call_operation (name
	// and arguments; then exactly the admission, plan gate, metering,
	// request building and result mapping of the operation's own tool,
	// counted under the operation's name). With a key, the first two see
	// only the operations of the key's plan. False: one tool per operation.
	Compact bool

	// ProtocolVersions narrows the MCP revisions served (a subset of the
	// go-sdk's, e.g. 2024-11-05, 2025-03-26, 2025-06-18): initialize
	// negotiates among them (a client asking for another gets the newest
	// listed), and a request naming another in MCP-Protocol-Version is
	// refused (400). Nil: every revision the go-sdk speaks.
	ProtocolVersions []string

	// MaxConcurrentCalls caps the tools/call requests in progress at once,
	// and MaxConcurrentCallsPerHost those whose upstream is one host; a
	// call past a cap is answered 429 with Retry-After: 1 before anything
	// is metered or sent. Zero: no cap.
	MaxConcurrentCalls        int
	MaxConcurrentCallsPerHost int

	// LegacySSEPath, when set, also serves the legacy HTTP+SSE transport
	// (MCP 2024-11-05) there: GET opens a stream (the caller's credential
	// read from it), POST ?sessionid=… delivers messages, answered on the
	// stream; every call is admitted and metered as on MCPPath. A session
	// lives in one process: replicas need sticky routing. Empty: none.
	LegacySSEPath string

	// Resources serve GET operations' answers as MCP resources
	// (resources/list, resources/read), each read admitted and metered as
	// a call of its operation; capabilities.resources is advertised only
	// then. Nil: no resources.
	Resources []Resource

	// ForwardHeaders lists the caller's request headers that are sent
	// upstream on every call, unchanged (an integration id, a culture):
	// nothing else the caller sends is ever forwarded. Hop-by-hop,
	// credential, MCP and framing headers cannot be listed (New refuses
	// them); a header the operation sets itself keeps the operation's
	// value. Nil: none.
	ForwardHeaders []string

	// Messages replace the text of restmcp's own 401 and 429 refusals, for
	// deployments that promised their clients a wording ("Unauthorized.
	// Register at … to obtain an API token."). Empty: restmcp's messages,
	// which say what went wrong and what to send.
	Messages Messages
	// JQFilter gives every tool whose 2xx answer is JSON an optional
	// jq_filter argument, run on the answer before it is returned (jq.go),
	// each filter in a jq worker process (jqworker.go): JQWorker must then
	// name the executable that serves as one.
	JQFilter bool
	// JQWorker is the executable started, with JQWorkerEnv=1, for each
	// jq filter: restmcp's own (os.Executable), or a test binary whose
	// TestMain calls ServeJQWorker. Required with JQFilter.
	JQWorker string
	// JQMaxMemoryBytes bounds the data a jq worker may allocate
	// (RLIMIT_DATA); past it the filter is stopped. 0: DefaultJQMaxMemoryBytes.
	JQMaxMemoryBytes int64
	// UnknownMethodNotFound answers a request for a method restmcp does not
	// serve with HTTP 404 and -32601 on every wire (false: 404 on the
	// 2026-07-28 wire, 200 before it).
	UnknownMethodNotFound bool
	// AcceptRequestsWithoutID answers a request without an id (a method
	// outside notifications/…) as a notification: 202 with an empty body,
	// nothing run or metered (decode).
	AcceptRequestsWithoutID bool
	// StreamAcceptStrict opens a session's GET stream only when Accept
	// names text/event-stream (MCP 2025-11-25 "Listening for Messages from
	// the Server": the client MUST list it); otherwise 405.
	StreamAcceptStrict bool
	// OriginRefusalText answers a foreign Origin's 403 with a text/plain
	// body instead of JSON.
	OriginRefusalText bool
	// ResponseMeta adds a top-level "meta" member, {"time": whole ms
	// spent, "parameters": the call's arguments}, to every JSON-RPC answer
	// on the MCP path: tools/call, success or error, and every other
	// request's (response_meta.go).
	ResponseMeta bool
	// MarkdownPage, when set, serves a Markdown page of the endpoint at this
	// path (discovery.go).
	MarkdownPage string
	// Watched reports that the document is reloaded when it changes (watch
	// or a reload interval): only then does sessions mode advertise
	// tools.listChanged.
	Watched bool
	// UnknownToolNotFound answers a tools/call of a name that is not a
	// tool (a retired one, say) with HTTP 404 and JSON-RPC -32601 "Unknown
	// tool: <name>". False: as the MCP SDK does, 200 with -32602.
	UnknownToolNotFound bool

	// PublicURL is the MCP endpoint as clients reach it
	// (https://mcp.example.com/mcp); its origin names the endpoints in the
	// server card and llms.txt. Empty: http and the request's Host.
	PublicURL string
	// ErrorStructuredContent keeps an upstream error body that is a JSON
	// object ({"code": …, "retryable": …, "request_id": …}) as the
	// structuredContent of the error result, beside the text (R3), so that
	// clients read the fields as data. False: error results carry text only.
	ErrorStructuredContent bool
	// UpstreamErrorsEmpty answers an upstream error with the result "[]"
	// (not an error), for deployments whose tools document an empty list
	// when the API fails; the status is in the log and metrics only. 401,
	// 403 and 429 stay error results: the caller must learn of its key and
	// its rate. False: an error result (R3).
	UpstreamErrorsEmpty bool
	// TextReceipt makes the text content of a result whose body is a JSON
	// object a one-line receipt (status, size, members) instead of the body
	// (R1): the object is carried once, in structuredContent, for clients
	// that read it. Errors, text and other bodies are unchanged. False: the
	// text is the body.
	TextReceipt bool
	// TimingMeta puts the call's timing in each tools/call result's _meta
	// ("io.restmcp/timing": meter_ms, upstream_ms, total_ms), beside the
	// Server-Timing header every tools/call response has. False: no _meta.
	TimingMeta bool
	// LLMsTxt serves GET /llms.txt: the endpoint, the authentication rule
	// and every tool with its one-line description, in Markdown. False:
	// no such route.
	LLMsTxt bool
	// Document, when set, is served at GET /openapi.json (the OpenAPI
	// document as JSON). Nil: no such route.
	Document []byte

	// Sessions, when set, turns on sessions mode: initialize issues an
	// Mcp-Session-Id that every later request must carry, a GET opens the
	// session's stream (where notifications/tools/list_changed arrives when
	// Reload changes the tools, and tools.listChanged is advertised), and
	// DELETE ends it. Nil: stateless, no sessions.
	Sessions session.Store
	// SessionIdleTimeout ends a session not used for that long (sliding).
	// SessionStreamLifetime is how long a session stream stays open before
	// the server closes it; SessionKeepAlive how often it carries a
	// keep-alive comment. Zero: DefaultSessionIdleTimeout (30 min),
	// DefaultSessionStreamLifetime (1 min), DefaultSessionKeepAlive (15 s).
	SessionIdleTimeout    time.Duration
	SessionStreamLifetime time.Duration
	SessionKeepAlive      time.Duration
	// MaxSessions and MaxSessionsPerAddress cap the live sessions this
	// replica keeps, in total (503) and per client address (429);
	// MaxStreamsPerSession the GET streams open on one session (429);
	// MaxLegacyStreamsPerAddress the legacy SSE streams open from one
	// address (429). Zero: the Default… caps (caps.go); negative: none.
	MaxSessions                int
	MaxSessionsPerAddress      int
	MaxStreamsPerSession       int
	MaxLegacyStreamsPerAddress int

	// TracerProvider, when set, traces every MCP request (a server span,
	// a child of the caller's W3C traceparent), each upstream call (a
	// client span whose traceparent goes upstream) and each metering
	// admission (a span event). Nil: no tracing.
	TracerProvider trace.TracerProvider

	// OAuth, when set, is the OAuth front for clients that cannot send an
	// API key (Claude and ChatGPT connectors): its authorization server's
	// routes are mounted, and the MCP endpoint is served a second time at
	// its ResourcePath, where every request needs one of its access tokens
	// and is then served as a call with the API key the token stands for.
	// Its access tokens are accepted as Bearer tokens at MCPPath too. Nil:
	// none.
	OAuth *oauth.Server

	// Logger receives the access log and tool-call diagnostics. Keys are never
	// logged, only their key_id. Nil: discard.
	Logger *slog.Logger
}

// Messages are the texts of restmcp's own refusals; an empty one keeps
// restmcp's.
type Messages struct {
	Unauthorized string // every 401 of an API key (missing, unknown, revoked, unusable)
	RateLimited  string // every 429 (a rate limit or quota), Retry-After still set
}

// ErrorCodes are the JSON-RPC error codes of restmcp's own refusals.
type ErrorCodes struct {
	Unauthorized int // HTTP 401: no key, an unknown, revoked or unusable one
	RateLimited  int // HTTP 429: a rate limit or quota
	Unavailable  int // HTTP 503: the key store or meter could not decide
}

// Server is a remote MCP server for a set of tools. It is safe for
// concurrent use.
type Server struct {
	userAgent string  // the User-Agent of upstream requests that set none: Name/Version
	opts      Options // defaults applied
	logger    *slog.Logger
	client    *http.Client
	mcp       *mcp.Server
	metrics   *metrics

	// table is the tool table being served; Reload swaps it whole. Each
	// request reads it once (the exchange keeps it), so a call finishes
	// on the table it started with.
	table atomic.Pointer[toolTable]
	// events queues usage events for one batching writer when the Meter
	// is an EventBatcher; nil otherwise. closeOnce closes it.
	events    *eventWriter
	closeOnce sync.Once
	// fastServed counts the requests the fast path answered;
	// pooledAnswers the upstream answers read into a pooled body buffer
	// (pooledbody.go).
	fastServed, pooledAnswers atomic.Int64
	tracer                    trace.Tracer
	streams                   *streamHub // open session streams (sessions mode)
	calls                     *callSlots // Options.MaxConcurrentCalls*
	// versions are the MCP revisions served, newest first:
	// Options.ProtocolVersions or the go-sdk\'s.
	versions []string
	document atomic.Pointer[[]byte] // GET /openapi.json (Options.Document)
	// impl is the server's name and version, as initialize reports it.
	impl *mcp.Implementation

	// Refunds and usage events written after the response (see afterCall).
	pending chan struct{}
	afterWG sync.WaitGroup
	// Tool handlers running an upstream call, and what stops them
	// (HaltCalls, halt.go): a context that outlives every call, ended by
	// HaltCalls, on which each call hangs its stop with context.AfterFunc
	// (no goroutine per call).
	running sync.WaitGroup
	halt    context.Context
	haltAll context.CancelFunc

	// Two go-sdk handlers over the same mcp.Server, one answering with
	// application/json and one with text/event-stream; decode (transport.go)
	// picks one per request from its Accept header.
	jsonHandler   http.Handler
	sseHandler    http.Handler
	legacyHandler http.Handler // Options.LegacySSEPath
	linkOnce      sync.Once    // linkSecret
	linkKey       []byte
	sessionCaps   *sessionCounts
	streamCaps    *openCounts // GET streams by session id
	legacyCaps    *openCounts // legacy SSE streams by address group
	legacyOwners  sync.Map    // legacy SSE session id → its stream opener (sessionOwner)

	engine *gin.Engine

	// meterWaits and keysWaits are false when Options.Meter or
	// Options.Keys never waits on a store (inMemory): their calls then run
	// without a MeterTimeout deadline, which costs a timer per call.
	meterWaits, keysWaits bool

	jq *jqProcess // runs jq filters (Options.JQFilter)
}

// inMemory is implemented by a Meter or KeyResolver that may say its calls
// never wait on a store (metering.MemoryMeter, a metering.Registry without
// Redis).
type inMemory interface{ InMemory() bool }

// waits reports whether v's calls may wait on a store: it does not say
// otherwise through inMemory.
func waits(v any) bool {
	m, ok := v.(inMemory)
	return !ok || !m.InMemory()
}

// New validates opts, registers every tool and builds the HTTP handler. It
// returns one error listing every problem found.
func New(opts Options) (*Server, error) {
	opts = opts.withDefaults()
	errs := opts.check()

	s := &Server{
		opts:      opts,
		userAgent: opts.Name + "/" + opts.Version,
		logger:    opts.Logger,
		client:    opts.HTTPClient,
		pending:   make(chan struct{}, maxPendingAfterCall),
	}
	s.meterWaits, s.keysWaits = waits(opts.Meter), waits(opts.Keys)
	s.jq = &jqProcess{exe: opts.JQWorker, slots: make(chan struct{}, jqWorkers), maxMemory: opts.JQMaxMemoryBytes}
	if s.logger == nil {
		s.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.client == nil {
		s.client = NewHTTPClient()
	}
	s.halt, s.haltAll = context.WithCancel(context.Background())
	s.tracer = newTracer(opts.TracerProvider)
	s.streams = newStreamHub()
	s.sessionCaps = newSessionCounts(capOrDefault(opts.MaxSessions, DefaultMaxSessions), capOrDefault(opts.MaxSessionsPerAddress, DefaultMaxSessionsPerAddress))
	s.streamCaps = newOpenCounts(capOrDefault(opts.MaxStreamsPerSession, DefaultMaxStreamsPerSession))
	s.calls = newCallSlots(opts.MaxConcurrentCalls, opts.MaxConcurrentCallsPerHost)

	if opts.Document != nil {
		s.document.Store(&opts.Document)
	}
	var reg prometheus.Registerer // nil: metrics kept but not registered
	if opts.Metrics != nil {      // a *prometheus.Registry: no typed nil in reg
		reg = opts.Metrics
	}
	var err error
	if s.metrics, err = newMetrics(reg); err != nil {
		errs = append(errs, fmt.Errorf("Metrics: %w", err))
	}
	if reg != nil {
		info := toolInfo{table: s.table.Load, desc: prometheus.NewDesc(MetricToolInfo,
			"1 for each tool served, labelled with its API, when several documents are served on one endpoint (docs/apis.md); join on tool to split per-tool series by API.",
			[]string{"api", "tool"}, nil)}
		if err := reg.Register(info); err != nil {
			errs = append(errs, fmt.Errorf("Metrics: %w", err))
		}
	}

	s.versions = mcp.SupportedProtocolVersions()
	var narrowed []string // for the SDK, which panics on a revision it does not speak
	if len(opts.ProtocolVersions) > 0 {
		s.versions = slices.DeleteFunc(s.versions, func(v string) bool { return !slices.Contains(opts.ProtocolVersions, v) })
		narrowed = s.versions
	}
	s.impl = &mcp.Implementation{Name: opts.Name, Version: opts.Version}
	s.mcp = mcp.NewServer(s.impl, &mcp.ServerOptions{
		Instructions:              opts.Instructions,
		SupportedProtocolVersions: narrowed,
		// All tools in one tools/list page: the table is static and clients
		// differ in how well they follow cursors.
		PageSize: max(len(opts.Tools), 1),
		// Tools, and resources when configured; no logging (the SDK's
		// default) or prompts.
		Capabilities: capabilities(opts),
	})
	// toolMethods answers tools/list and tools/call; listByPlan, outside
	// it, filters the list.
	s.mcp.AddReceivingMiddleware(s.toolMethods)
	if opts.ListByPlan {
		s.mcp.AddReceivingMiddleware(s.listByPlan)
	}
	tbl, toolErrs := s.newTable(opts.Tools)
	errs = append(errs, toolErrs...)
	errs = append(errs, checkResources(opts.Resources, tbl)...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s.table.Store(tbl)
	s.addResources()
	s.addDownloads()
	if _, ok := opts.Meter.(EventBatcher); ok {
		s.startEventWriter()
	}
	if opts.LegacySSEPath != "" {
		s.legacyHandler = s.newLegacyHandler()
		s.legacyCaps = newOpenCounts(capOrDefault(opts.MaxLegacyStreamsPerAddress, DefaultMaxLegacyStreamsPerAddress))
	}
	s.jsonHandler = s.streamableHandler(true)
	s.sseHandler = s.streamableHandler(false)
	s.engine = s.newEngine()
	// Only the listed proxies may name the client address (gin trusts every
	// proxy unless told otherwise).
	if err := s.engine.SetTrustedProxies(opts.TrustedProxies); err != nil {
		return nil, fmt.Errorf("TrustedProxies: %w", err)
	}
	return s, nil
}

// withDefaults returns o with every zero field that has a default set to
// it; PublicMode implies AllowAnonymous.
func (o Options) withDefaults() Options {
	o.Name = cmp.Or(o.Name, DefaultName)
	o.Version = cmp.Or(o.Version, DefaultVersion)
	o.MCPPath = cmp.Or(o.MCPPath, DefaultMCPPath)
	o.MeterTimeout = cmp.Or(o.MeterTimeout, DefaultMeterTimeout)
	o.UpstreamTimeout = cmp.Or(o.UpstreamTimeout, DefaultUpstreamTimeout)
	o.JQMaxMemoryBytes = cmp.Or(o.JQMaxMemoryBytes, DefaultJQMaxMemoryBytes)
	o.MaxBodyBytes = cmp.Or(o.MaxBodyBytes, DefaultMaxBodyBytes)
	o.MaxResponseBytes = cmp.Or(o.MaxResponseBytes, DefaultMaxResponseBytes)
	o.MaxBinaryBytes = cmp.Or(o.MaxBinaryBytes, DefaultMaxBinaryBytes)
	o.MaxDownloadBytes = cmp.Or(o.MaxDownloadBytes, DefaultMaxDownloadBytes)
	o.AsyncPollInterval = cmp.Or(o.AsyncPollInterval, DefaultAsyncPollInterval)
	o.TaskTTL = cmp.Or(o.TaskTTL, DefaultTaskTTL)
	o.MaxTasksPerKey = cmp.Or(o.MaxTasksPerKey, DefaultMaxTasksPerKey)
	o.MaxTasks = cmp.Or(o.MaxTasks, DefaultMaxTasks)
	o.SessionIdleTimeout = cmp.Or(o.SessionIdleTimeout, DefaultSessionIdleTimeout)
	o.SessionStreamLifetime = cmp.Or(o.SessionStreamLifetime, DefaultSessionStreamLifetime)
	o.SessionKeepAlive = cmp.Or(o.SessionKeepAlive, DefaultSessionKeepAlive)
	o.ErrorCodes.Unauthorized = cmp.Or(o.ErrorCodes.Unauthorized, CodeUnauthorized)
	o.ErrorCodes.RateLimited = cmp.Or(o.ErrorCodes.RateLimited, CodeRateLimited)
	o.ErrorCodes.Unavailable = cmp.Or(o.ErrorCodes.Unavailable, CodeUnavailable)
	if o.PublicMode {
		o.AllowAnonymous = true
	}
	return o
}

// check returns every problem of o (after withDefaults).
func (o Options) check() []error {
	var errs []error
	if o.JQFilter && o.JQWorker == "" {
		errs = append(errs, errors.New("JQFilter needs JQWorker: the executable that runs each jq filter in a process of its own (restmcp's own)"))
	}
	if o.MCPPath[0] != '/' {
		errs = append(errs, fmt.Errorf("MCPPath %q must start with /", o.MCPPath))
	}
	switch o.MCPPath {
	case "/health", "/ready", "/usage", "/metrics":
		errs = append(errs, fmt.Errorf("MCPPath %q collides with a built-in route", o.MCPPath))
	}
	if o.OAuth != nil {
		switch p := o.OAuth.ResourcePath(); {
		case p == "/":
			errs = append(errs, errors.New(`OAuth's MCP path must not be "/": its resource metadata lives under /.well-known`))
		case p == o.MCPPath:
			errs = append(errs, fmt.Errorf("OAuth's MCP path %q is MCPPath too; header clients and OAuth clients need one each", p))
		case p == "/health" || p == "/ready" || p == "/usage" || p == "/metrics" || strings.HasPrefix(p, "/.well-known/") ||
			p == oauth.PathAuthorize || p == oauth.PathToken || p == oauth.PathRegister || p == oauth.PathRevoke:
			errs = append(errs, fmt.Errorf("OAuth's MCP path %q collides with a built-in route", p))
		}
		if o.PublicMode {
			errs = append(errs, errors.New("OAuth and PublicMode exclude each other: public mode ignores every credential"))
		}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"MaxBodyBytes", o.MaxBodyBytes}, {"MaxResponseBytes", int64(o.MaxResponseBytes)}, {"MaxBinaryBytes", int64(o.MaxBinaryBytes)}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s %d must be positive", f.name, f.v))
		}
	}
	if o.MeterTimeout < 0 {
		errs = append(errs, fmt.Errorf("MeterTimeout %v must be positive", o.MeterTimeout))
	}
	for _, origin := range o.AllowedOrigins {
		if origin != "*" && normalizeOrigin(origin) == "" {
			errs = append(errs, fmt.Errorf("AllowedOrigins: %q is not scheme://host[:port]", origin))
		}
	}
	for _, h := range o.ForwardHeaders {
		if reason := unforwardable(h); reason != "" {
			errs = append(errs, fmt.Errorf("ForwardHeaders: %q %s", h, reason))
		}
	}
	for _, v := range o.ProtocolVersions {
		if !slices.Contains(mcp.SupportedProtocolVersions(), v) {
			errs = append(errs, fmt.Errorf("ProtocolVersions: %q is not a revision restmcp speaks (%s)", v, strings.Join(mcp.SupportedProtocolVersions(), ", ")))
		}
	}
	if o.PublicGlobalPlan != nil && !o.PublicMode {
		errs = append(errs, errors.New("PublicGlobalPlan needs PublicMode"))
	}
	if o.ListByPlan && o.Keys == nil {
		errs = append(errs, errors.New("ListByPlan needs Keys"))
	}
	return errs
}

// toolTable is one version of the served tools: what tools/list lists and
// tools/call reaches. It never changes once built; Reload replaces it.
type toolTable struct {
	tools map[string]*openapi.Tool // the operations' tools, by name
	apis  bool                     // the tools belong to several named APIs (openapi.Tool.API)
	// listed is tools/list in name order and handlers the tools/call
	// handler of each listed tool. In compact mode these are the three
	// compact tools, and opHandlers (otherwise the same map as handlers)
	// holds the operations' handlers that call_operation runs.
	listed     []*mcp.Tool
	handlers   map[string]mcp.ToolHandler
	opHandlers map[string]mcp.ToolHandler
	compact    *compactTools // nil unless Options.Compact
	// jobTool is the companion tool's name (tasks.go); "" when not listed.
	jobTool string
	// list is the tools/list result, encoded once as the SDK encodes it
	// (the fast path's answer).
	list *encodedList
	// planLists holds, by plan name, the encoded tools/list of a plan
	// (Options.ListByPlan), made on first use: an *encodedList.
	planLists sync.Map
}

// newTable builds the tool table of tools, sorted by name, and returns the
// problems in index order: a nil tool, a second tool of a name (the first
// is served), a tool whose schemas do not convert. Schemas are checked on
// GOMAXPROCS workers (a validating pass over every schema).
func (s *Server) newTable(tools []*openapi.Tool) (*toolTable, []error) {
	tbl := &toolTable{
		tools:      make(map[string]*openapi.Tool, len(tools)),
		opHandlers: make(map[string]mcp.ToolHandler, len(tools)),
	}
	toolErrs := make([]error, len(tools))
	listed := make([]*mcp.Tool, len(tools))
	first := map[string]int{}
	var todo []int
	for i, t := range tools {
		if t == nil {
			toolErrs[i] = fmt.Errorf("Tools[%d] is nil", i)
			continue
		}
		if _, dup := first[t.Name]; dup {
			toolErrs[i] = fmt.Errorf("Tools[%d]: duplicate tool name %q", i, t.Name)
			continue
		}
		first[t.Name] = i
		todo = append(todo, i)
		tbl.apis = tbl.apis || t.API != ""
	}
	forEachParallel(len(todo), func(k int) {
		i := todo[k]
		mt, err := listedTool(tools[i])
		if err != nil {
			toolErrs[i] = fmt.Errorf("Tools[%d] %q: %w", i, tools[i].Name, err)
			return
		}
		if s.opts.JQFilter && tools[i].RespondsJSON() {
			mt.InputSchema = withJQArgument(tools[i].InputSchema)
		}
		listed[i] = mt
	})
	for _, i := range todo {
		if toolErrs[i] == nil {
			t := tools[i]
			tbl.tools[t.Name] = t
			tbl.opHandlers[t.Name] = s.toolHandler(t)
			tbl.listed = append(tbl.listed, listed[i])
		}
	}
	if tbl.listed == nil {
		tbl.listed = []*mcp.Tool{} // "tools": [], not null
	}
	slices.SortFunc(tbl.listed, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	var errs []error
	for _, err := range toolErrs {
		if err != nil {
			errs = append(errs, err)
		}
	}
	tbl.handlers = tbl.opHandlers
	if tbl.jobTool = s.jobToolFor(tbl.tools); tbl.jobTool != "" {
		tbl.handlers = maps.Clone(tbl.opHandlers)
		tbl.handlers[tbl.jobTool] = s.jobToolHandler(tbl.jobTool)
		tbl.listed = append(tbl.listed, jobTool(tbl.jobTool))
		slices.SortFunc(tbl.listed, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	}
	if s.opts.Compact {
		tbl.compact = newCompactTools(tbl.tools)
		tbl.listed, tbl.handlers = compactListed(), s.compactHandlers()
	}
	b, err := encodeToolsList(tbl.listed)
	if err != nil {
		errs = append(errs, fmt.Errorf("encoding tools/list: %w", err))
	}
	tbl.list = &encodedList{json: b}
	return tbl, errs
}

// encodeToolsList is the tools/list result of listed as the go-sdk encodes
// it (sdkJSON of an mcp.ListToolsResult, cache scope "public"), byte for
// byte: each tool is encoded on its own, on every core, and the list is
// assembled in one buffer of its final size. Encoded whole, a list of
// megabytes (Kubernetes: 9.7 MB) spent a third of the start growing one
// encoder buffer.
func encodeToolsList(listed []*mcp.Tool) ([]byte, error) {
	env, err := sdkJSON(&mcp.ListToolsResult{Tools: []*mcp.Tool{}, Cacheable: mcp.Cacheable{CacheScope: "public"}})
	if err != nil {
		return nil, err
	}
	const empty = `"tools":[]`
	at := bytes.Index(env, []byte(empty))
	if at < 0 {
		return nil, fmt.Errorf("the go-sdk's ListToolsResult encoding %s has no %s", env, empty)
	}
	parts := make([][]byte, len(listed))
	errs := make([]error, len(listed))
	forEachParallel(len(listed), func(i int) { parts[i], errs[i] = sdkJSON(listed[i]) })
	n := len(env)
	for i, p := range parts {
		if errs[i] != nil {
			return nil, fmt.Errorf("tool %q: %w", listed[i].Name, errs[i])
		}
		n += len(p) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, env[:at+len(empty)-1]...) // up to and with "["
	for i, p := range parts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, p...)
	}
	return append(out, env[at+len(empty)-1:]...), nil // "]" and the rest
}

// Reload serves tools from now on: the new table replaces the current one
// at once, and calls already running finish on the table they started
// with. A set of tools with any problem (see New) is refused whole, and
// the current table stays.
func (s *Server) Reload(tools []*openapi.Tool) error {
	tbl, errs := s.newTable(tools)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	s.table.Store(tbl)
	if s.opts.Sessions != nil {
		n := s.streams.broadcast(listChangedNotification)
		s.logger.Info("tools changed; notified the open session streams", "tools", len(tools), "streams", n)
	}
	return nil
}

// tableFor is the tool table of the request of ctx: the one it read when
// it arrived, or (outside a request) the current one.
func (s *Server) tableFor(ctx context.Context) *toolTable {
	if t := exchangeFrom(ctx).table; t != nil {
		return t
	}
	return s.table.Load()
}

// streamableHandler builds a stateless go-sdk handler over s.mcp.
func (s *Server) streamableHandler(jsonResponse bool) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: jsonResponse,
		Logger:       s.logger,
		// See the package documentation: the Origin rule covers DNS
		// rebinding, and the SDK's check breaks local reverse proxies.
		DisableLocalhostProtection: true,
		// The body-limit middleware has already enforced MaxBodyBytes.
		MaxRequestBodyBytes: s.opts.MaxBodyBytes,
	})
}

// Handler returns the HTTP handler: the MCP endpoint at Options.MCPPath,
// GET /health, GET /ready, GET /usage and (with Options.Metrics) GET
// /metrics.
func (s *Server) Handler() http.Handler { return s.engine }

// forEachParallel calls f(0) … f(n-1) on up to GOMAXPROCS goroutines and
// returns when all calls have.
func forEachParallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}
