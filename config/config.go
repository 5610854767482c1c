package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Defaults. A Config from [Default] holds exactly these values; [Settings]
// prints them, so --help and docs/settings.md cannot drift from the code.
const (
	// DefaultSpec is empty: restmcp serves the bundled demo finance API.
	DefaultSpec = ""
	// DefaultUpstream is empty: requests go to the document's servers.
	DefaultUpstream = ""
	// DefaultLenient is true: serve skips the parts of a document that do
	// not load (one warning each) and serves the rest. restmcp validate is
	// always strict.
	DefaultLenient = true
	// DefaultAddr listens on loopback only. The container image sets
	// RESTMCP_ADDR=0.0.0.0:8080 instead, because loopback inside a container
	// is unreachable from outside it.
	DefaultAddr = "127.0.0.1:8080"
	// DefaultMCPPath is where the Streamable HTTP endpoint is mounted.
	DefaultMCPPath = "/mcp"
	// DefaultToolMode serves one tool per operation.
	DefaultToolMode = ToolModeFull
	// DefaultOAuthMCPPath is where the OAuth MCP endpoint is mounted.
	DefaultOAuthMCPPath = "/oauth/mcp"
	// DefaultRedisURL is empty: metering counters live in process memory
	// (one replica only; counters reset on restart).
	DefaultRedisURL Secret = ""
	// DefaultRedisMode is one Redis server.
	DefaultRedisMode = RedisSingle
	// DefaultRateLimit is the number of tools/call requests one key may make
	// per DefaultRateWindow.
	DefaultRateLimit = 100
	// DefaultRateWindow is the rate-limit window.
	DefaultRateWindow = 60 * time.Second
	// DefaultUpstreamTimeout bounds one upstream request, from dial to the
	// last byte of the body.
	DefaultUpstreamTimeout = 30 * time.Second
	// DefaultMeterTimeout bounds the metering work before one tools/call
	// (key lookup and admission); past it the call gets 503.
	DefaultMeterTimeout = 2 * time.Second
	// DefaultMaxBodyBytes is the largest MCP request body accepted (1 MiB);
	// larger bodies get 413.
	DefaultMaxBodyBytes int64 = 1 << 20
	// DefaultMaxResponseBytes caps the upstream text body put into a tool
	// result (100 KiB); longer bodies are truncated, and the result says so.
	DefaultMaxResponseBytes int64 = 100 << 10
	// DefaultMaxToolNameLength is the tool-name cap (64 characters): the
	// length every known MCP client accepts.
	DefaultMaxToolNameLength = 64
	// DefaultRequireKey makes tools/call without an API key answer 401.
	DefaultRequireKey = true
	// DefaultLogLevel is info: lifecycle events, warnings and errors.
	DefaultLogLevel = slog.LevelInfo
	// DefaultLogFormat is human-readable key=value text.
	DefaultLogFormat = LogFormatText
	// DefaultShutdownTimeout is how long in-flight requests get to finish
	// after SIGINT/SIGTERM.
	DefaultShutdownTimeout = 10 * time.Second
	// DefaultReadHeaderTimeout bounds reading one request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds reading one whole request, headers and body
	// (a 1 MiB body at 35 KB/s fits): a client that sends headers and then
	// nothing is cut off.
	DefaultReadTimeout = 30 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may wait for
	// its next request.
	DefaultIdleTimeout = 120 * time.Second
	// DefaultMaxHeaderBytes caps the request line and headers (64 KiB).
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxConnections caps the connections served at once; more wait
	// in the listen backlog, so a flood of idle connections cannot use up
	// the process's file descriptors.
	DefaultMaxConnections = 4096
	// DefaultPlansFile is empty: one implicit plan from rate_limit and
	// rate_window, key mode open (any key is accepted and metered).
	DefaultPlansFile = ""
	// DefaultListByPlan is false: tools/list lists every tool, whatever the
	// caller's plan.
	DefaultListByPlan = false
	// DefaultEventMaxLen is the approximate length the usage event stream
	// is trimmed to (Redis XADD MAXLEN ~).
	DefaultEventMaxLen int64 = 1_000_000
	// DefaultMetrics serves GET /metrics.
	DefaultMetrics = true
	// DefaultReportMaxTools is the tool count above which startup warns
	// (openapi.DefaultReportMaxTools): many clients degrade past it.
	DefaultReportMaxTools = 128
	// DefaultMaxDescriptionLength caps a tool description (S10;
	// openapi.DefaultMaxDescriptionLength).
	DefaultMaxDescriptionLength = 1024
	// DefaultSchemaBudget caps each tool's input schema (32 KiB;
	// openapi.DefaultSchemaBudget).
	DefaultSchemaBudget = 32 << 10
	// DefaultOutputSchemaBudget caps one output schema (4 KiB;
	// openapi.DefaultOutputSchemaBudget).
	DefaultOutputSchemaBudget = 4 << 10
	// DefaultReportMaxListBytes is the tools/list size above which startup
	// warns (256 KiB; openapi.DefaultReportMaxListBytes).
	DefaultReportMaxListBytes = 256 << 10
)

// Bounds checked by Validate.
const (
	// MinToolNameLength leaves room for the N5 suffix ("_" and 8 hex
	// characters) after a 7-character prefix.
	MinToolNameLength = 16
	// MaxToolNameLength is the MCP specification's own limit (SEP-986).
	// Values above 64 break some clients (Cursor, OpenAI).
	MaxToolNameLength = 128
)

// RedisMode says how RedisURL is read, and which go-redis client serves it.
type RedisMode string

const (
	// RedisSingle: one Redis server, redis://[user:password@]host:port/db
	// (go-redis ParseURL, redis.NewClient).
	RedisSingle RedisMode = "single"
	// RedisCluster: a Redis Cluster, its seed nodes as
	// redis://[user:password@]host1:port?addr=host2:port&addr=host3:port
	// (go-redis ParseClusterURL, redis.NewClusterClient).
	RedisCluster RedisMode = "cluster"
	// RedisSentinel: a master set watched by Sentinels,
	// redis://[user:password@]sentinel1:26379?master_name=mymaster&addr=sentinel2:26379
	// (go-redis ParseFailoverURL, redis.NewFailoverClient).
	RedisSentinel RedisMode = "sentinel"
)

// LogFormat selects the slog handler.
type LogFormat string

// Log formats.
const (
	LogFormatText LogFormat = "text" // slog.TextHandler
	LogFormatJSON LogFormat = "json" // slog.JSONHandler
)

// Config is restmcp's whole configuration. The zero value is not valid; start
// from [Default] or [Load]. Every field has a flag, an environment variable
// and a YAML key, listed by [Settings].
type Config struct {
	// Spec is the OpenAPI document: a file path (relative to the working
	// directory) or an http(s) URL. Empty means the bundled demo finance API
	// (package examples), served in-process.
	Spec string
	// Upstream overrides the document's servers (an absolute http(s) URL).
	// With only scheme and host it keeps the document server's path; with a
	// path it replaces the server URL (openapi.LoadOptions.Upstream). Empty
	// means the document's servers.
	Upstream string
	// Overlays are OpenAPI Overlay 1.0 documents (file paths or http(s)
	// URLs) applied in order to Spec before it is loaded
	// (openapi.LoadOptions.Overlays). Nil means none.
	Overlays []string
	// RefRoot is the folder that the document's external $refs must stay
	// inside (openapi.LoadOptions.RefRoot); it must
	// contain the document. Empty means the document's own folder. A
	// document whose shared files sit beside its folder (spec/ and
	// common/) needs the parent folder here.
	RefRoot string
	// APIs, when not empty, are several documents served on one endpoint
	// instead of Spec (the config file's apis: list, or --spec NAME=PATH
	// flags); each API's tools are named "<name>_<tool>" (api.go,
	// docs/apis.md). Nil means the single document of Spec.
	APIs []API
	// Lenient loads a document that does not load as published by skipping
	// its broken references, nodes and operations, one warning each
	// (openapi.LoadOptions.Lenient). Default true; restmcp validate ignores
	// it and is always strict.
	Lenient bool
	// Addr is the host:port the HTTP server listens on. Default
	// 127.0.0.1:8080: loopback only. Use 0.0.0.0:8080 to accept remote
	// clients (the container image does).
	Addr string
	// MCPPath is the URL path of the Streamable HTTP endpoint. Default /mcp.
	MCPPath string
	// RedisURL is the metering store, as accepted by go-redis ParseURL
	// (redis://, rediss:// or unix://). It may hold a password, hence Secret.
	// Empty means in-memory metering: counters are per process and reset on
	// restart, so it only suits a single replica.
	RedisURL Secret
	// RedisMode is how RedisURL is read: single (default), cluster or
	// sentinel.
	RedisMode RedisMode
	// RateLimit is the number of tools/call requests one API key may make per
	// RateWindow. -1 disables rate limiting; 0 is invalid. Default 100.
	RateLimit int
	// RateWindow is the rate-limit window. Must be positive. Default 60s.
	RateWindow time.Duration
	// UpstreamTimeout bounds one upstream request including reading its
	// body. Must be positive. Default 30s.
	UpstreamTimeout time.Duration
	// MeterTimeout bounds the key lookup and the admission of one tools/call
	// against the metering store (Redis); past it the call gets 503 with
	// Retry-After. Metering in memory never waits and runs without it.
	// Must be positive. Default 2s.
	MeterTimeout time.Duration
	// MaxBodyBytes is the largest MCP request body, in bytes; larger ones get
	// 413. Must be positive. Default 1048576 (1 MiB).
	MaxBodyBytes int64
	// MaxResponseBytes caps the upstream text body put into a tool result, in
	// bytes; longer ones are truncated with a note (R5). Must be positive.
	// Default 102400 (100 KiB).
	MaxResponseBytes int64
	// BinaryLinkBytes: a GET's binary answer larger than it is a
	// resource_link (adapter.Options.BinaryLinkBytes). 0: off.
	BinaryLinkBytes int
	// MaxDownloadBytes caps a binary answer read through a link.
	MaxDownloadBytes int
	// AsyncWait is how long a call answered 202 with a status resource
	// waits for the job to end (adapter.Options.AsyncWait). 0: off.
	AsyncWait time.Duration
	// AsyncPollInterval is the shortest wait between two polls of a job
	// (adapter.Options.AsyncPollInterval).
	AsyncPollInterval time.Duration
	// Tasks is where jobs that outlive their call are kept: "auto"
	// (redis with redis_url, else memory), "memory", "redis" or "off"
	// (adapter.Options.Tasks).
	Tasks Tasks
	// TaskTTL is how long a task is kept from its start; MaxTasksPerKey
	// and MaxTasks cap the working tasks of one key and of all.
	TaskTTL        time.Duration
	MaxTasksPerKey int
	MaxTasks       int
	// AllowedOrigins lists the browser origins allowed to call the MCP
	// endpoint, each "scheme://host[:port]" (compared case-insensitively,
	// stored lower-case) or "*" for any origin. Requests without an Origin
	// header (IDE agents, SDKs, server-side connectors) are always allowed.
	//
	// Empty (the default) allows a request with an Origin header only when
	// the Origin's host and the request's Host header are both loopback:
	// "localhost", an address in 127.0.0.0/8, or "::1" (ports may differ,
	// scheme http or https). Every other Origin gets 403. This is the MCP
	// specification's defence against DNS rebinding: a page on
	// http://evil.example whose name resolves to 127.0.0.1 still sends
	// Origin: http://evil.example. A non-empty list replaces that rule
	// entirely: list http://localhost:3000 explicitly if you still need it.
	AllowedOrigins []string
	// MaxToolNameLength caps tool names (N5), from MinToolNameLength to
	// MaxToolNameLength. Default 64.
	MaxToolNameLength int
	// RequireKey makes tools/call without an API key answer 401 before
	// anything is sent upstream. When false, such calls go on without a
	// caller credential: an operation that needs none reaches the upstream
	// (public APIs), one that needs a key gets an error result naming its
	// security scheme. Default true.
	RequireKey bool
	// PublicMode serves anonymous public reads: every tools/call is metered
	// under its client address whatever credential it presents, and no
	// caller credential is sent upstream. RequireKey is ignored. Default
	// false.
	PublicMode bool
	// Watch reloads a file spec when it changes (checked every
	// ReloadInterval, default 2 s): the tools are swapped at once, and a
	// document that fails to load keeps the current ones. Default false.
	Watch bool
	// ReloadInterval is how often Watch checks the spec file, or, for a
	// spec URL, how often it is fetched again (with If-None-Match and
	// If-Modified-Since). Zero: 2 s with Watch, no reload of a URL
	// otherwise. SIGHUP reloads either at once.
	ReloadInterval time.Duration
	// Sessions is "off" (stateless), "memory" or "redis" (sessions shared
	// by every replica; needs redis_url): see adapter.Options.Sessions.
	// Default off.
	Sessions Sessions
	// SessionIdleTimeout ends a session unused for that long. Default 30m.
	SessionIdleTimeout time.Duration
	// MaxSessions and MaxSessionsPerAddress cap the live sessions a replica
	// keeps (sessions mode), in total and per client address (an IPv6
	// address by its /64); MaxStreamsPerSession the GET streams open on one
	// session; MaxLegacyStreamsPerAddress the legacy SSE streams open from
	// one address. 0: no cap. Defaults 10000, 100, 4, 16.
	MaxSessions                int
	MaxSessionsPerAddress      int
	MaxStreamsPerSession       int
	MaxLegacyStreamsPerAddress int
	// LegacySSEPath serves the legacy HTTP+SSE transport (2024-11-05) at
	// that path too. Empty: none.
	LegacySSEPath string
	// Resources maps MCP resource URIs to the GET tools that answer them
	// (adapter.Options.Resources). Nil: no resources.
	Resources map[string]string
	// ErrorStructuredContent keeps an upstream JSON error object as the
	// error result's structuredContent. Default false.
	ErrorStructuredContent bool
	// UpstreamErrors is "error" (an error result, R3) or "empty_array" (the
	// result "[]", except for 401, 403 and 429). Default error.
	UpstreamErrors UpstreamErrors
	// ProtocolVersions narrows the MCP revisions offered
	// (adapter.Options.ProtocolVersions). Nil: all of them.
	ProtocolVersions []string
	// MaxConcurrentCalls and MaxConcurrentCallsPerHost cap the tools/call
	// requests in progress, in all and per upstream host; past a cap, 429
	// with Retry-After: 1. 0: no cap.
	MaxConcurrentCalls        int
	MaxConcurrentCallsPerHost int
	// TextContent is "full" (a result's text is the body) or "receipt" (a
	// JSON object body travels once, in structuredContent, and the text is
	// a one-line receipt). Default full.
	TextContent TextContent
	// StrictArguments lists every input schema closed (additionalProperties:
	// false). Unknown arguments are refused either way. Default false.
	StrictArguments bool
	// ToolNameStyle is how operationIds become tool names: snake
	// (etfs_top_holdings), kebab (get-accounts) or as_is. Default snake.
	ToolNameStyle ToolNameStyle
	// ForwardHeaders lists caller headers sent upstream unchanged on every
	// call (adapter.Options.ForwardHeaders). Nil: none.
	ForwardHeaders []string
	// UnauthorizedMessage and RateLimitedMessage replace the text of
	// restmcp's 401 and 429 refusals. Empty: restmcp's own.
	UnauthorizedMessage string
	RateLimitedMessage  string
	// UnknownToolNotFound answers a tools/call of an unknown tool with 404
	// and -32601 "Unknown tool: <name>". Default false (200, -32602).
	UnknownToolNotFound bool
	// JQFilter gives every tool whose 2xx answer is JSON an optional
	// jq_filter argument. Default false.
	JQFilter bool
	// JQMaxMemoryBytes bounds the memory one jq filter's worker process
	// may allocate (RLIMIT_DATA). Must be at least 64 MiB. Default 512 MiB.
	JQMaxMemoryBytes int64
	// UnknownMethodNotFound answers a request for a method restmcp does not
	// serve with 404 and -32601 on every wire. Default false (200 before the
	// 2026-07-28 wire).
	UnknownMethodNotFound bool
	// AcceptRequestsWithoutID answers a JSON-RPC request without an id
	// (a method outside notifications/…) as a notification: 202, an empty
	// body, nothing run. Default false (400 -32600 for tools/call, the
	// SDK's answer otherwise).
	AcceptRequestsWithoutID bool
	// StreamAcceptStrict opens a session's GET stream only for an Accept
	// that names text/event-stream; anything else (none, */*) is 405.
	// Default false (a missing Accept or */* opens it).
	StreamAcceptStrict bool
	// OriginRefusalText answers a foreign Origin's 403 with a text/plain
	// body. Default false (a JSON body).
	OriginRefusalText bool
	// ResponseMeta adds a top-level "meta" member {time, parameters} to
	// every tools/call response, success or error. Default false.
	ResponseMeta bool
	// MarkdownPage serves a Markdown page of the MCP endpoint at this path
	// ("/docs/v2_mcp.md"). Empty (default): none.
	MarkdownPage string
	// ServerName and ServerVersion are the serverInfo of initialize and the
	// server card. Empty: restmcp and its own version.
	ServerName    string
	ServerVersion string
	// TimingMeta adds the call's timing to each tools/call result's _meta.
	// Default false.
	TimingMeta bool
	// LLMsTxt serves GET /llms.txt. Default true.
	LLMsTxt bool
	// ServeOpenAPI serves the document at GET /openapi.json. Default false.
	ServeOpenAPI bool
	// ToolMode is "full" (one tool per operation) or "compact" (three
	// tools: search_operations, describe_operation, call_operation; for
	// APIs too large to list). Default full.
	ToolMode ToolMode
	// OAuth serves the OAuth front for Claude and ChatGPT connectors,
	// which cannot send API keys: an authorization server whose sign-in
	// page takes the user's API key, and a second MCP endpoint at
	// OAuthMCPPath that takes its access tokens. Default false.
	OAuth bool
	// OAuthMCPPath is the OAuth MCP endpoint's path. Default /oauth/mcp.
	OAuthMCPPath string
	// OAuthEncryptionKey seals the API keys behind access tokens in the
	// token store: 32 bytes, base64-encoded. Required with redis_url, and
	// the same on every replica; without Redis, empty makes a random key
	// per process.
	OAuthEncryptionKey Secret
	// OAuthKeysURL is where users get an API key, linked from the sign-in
	// page. Empty: no link.
	OAuthKeysURL string
	// OAuthRedirectURIs lists the https redirect URIs OAuth clients may
	// register: exact URIs and https://host/path/* patterns (one more
	// path segment); loopback http ones always may. Default: the Claude,
	// ChatGPT and Cursor connector callbacks.
	OAuthRedirectURIs []string
	// OAuthRedirectSchemes are the private-use URI schemes without a dot
	// that native apps may register redirect URIs with (a scheme with a
	// dot always may). Default: cursor, vscode, vscode-insiders,
	// windsurf, claude.
	OAuthRedirectSchemes []string
	// OAuthRegisterLimit caps client registrations (and client metadata
	// document fetches) per client address per minute, an IPv6 address by
	// its /64. Default 60; 0: no limit.
	OAuthRegisterLimit int
	// OAuthSignInLimit caps sign-in attempts per client address per
	// minute, the guard against guessing keys. Default 10; 0: no limit.
	OAuthSignInLimit int
	// OAuthClientTTL is how long a registered client is kept unused; its
	// tokens keep it as long as they live. Default 24h.
	OAuthClientTTL time.Duration
	// IdPIssuer, when set, turns on resource-server mode: access tokens of
	// that OpenID provider are accepted (adapter/idp). IdPAudience is the
	// aud they must carry ("": the MCP URL: public_url + mcp_path, or the
	// listen address's); IdPAlgorithms the accepted JWS algorithms;
	// IdPIdentityClaim and IdPPlanClaim the claims that name the caller
	// and its plan; IdPUpstream "exchange" (RFC 8693, with IdPClientID,
	// IdPClientSecret and IdPExchangeAudience) or "forward".
	IdPIssuer           string
	IdPAudience         string
	IdPAlgorithms       []string
	IdPIdentityClaim    string
	IdPPlanClaim        string
	IdPUpstream         string
	IdPClientID         string
	IdPClientSecret     string
	IdPExchangeAudience string
	// OAuthMaxClients caps the registered clients kept; past it, the
	// longest unused are dropped. Default 10000.
	OAuthMaxClients int
	// OAuthEnterpriseIdPs are the enterprise identity providers whose
	// identity assertions the OAuth front's token endpoint takes (issuer
	// URL → the name of the environment variable holding the API key
	// their users' calls carry). Empty: none.
	OAuthEnterpriseIdPs map[string]string
	// OAuthVerifyOperation names the tool whose upstream call, made
	// without arguments, checks a key at sign-in when keys are not in a
	// registry (key_mode open). Empty: such keys are accepted as typed.
	OAuthVerifyOperation string
	// PublicGlobalPlan, in public mode, names a plan of the plans file whose
	// limits apply to all public callers together. Empty: none.
	PublicGlobalPlan string
	// TrustedProxies lists the proxies (IP addresses or CIDR ranges) whose
	// X-Forwarded-For names the client address. Empty: the TCP peer is the
	// client.
	TrustedProxies []string
	// LogLevel is one of slog.LevelDebug, LevelInfo, LevelWarn, LevelError.
	// Default info.
	LogLevel slog.Level
	// LogFormat is text or json. Default text.
	LogFormat LogFormat
	// ShutdownTimeout is how long in-flight requests get to finish after
	// SIGINT or SIGTERM. Must be positive. Default 10s.
	ShutdownTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers. Must be
	// positive. Default 10s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included (net/http
	// Server.ReadTimeout). Must be positive. Default 30s.
	ReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no request for
	// this long. Must be positive. Default 120s.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps the request line and headers, in bytes; larger
	// requests get 431. Must be positive. Default 65536.
	MaxHeaderBytes int
	// MaxConnections caps the connections served at once; further ones
	// wait to be accepted. Must be positive. Default 4096.
	MaxConnections int
	// UpstreamHosts lists the hosts (host or host:port, case-insensitive),
	// besides the upstream's own, that may receive callers' keys: with
	// Upstream set, an operation or path whose servers entry names another
	// host is refused at startup unless its host is listed. Empty: only
	// the upstream's host.
	UpstreamHosts []string
	// PlansFile is the plans file (YAML): plans with rate limits, quotas,
	// allowed tools, costs and upgrade paths; default_plan, key_mode,
	// counting, outage policy and static keys (see metering.ParsePlans).
	// Empty means one implicit plan built from RateLimit and RateWindow,
	// key mode open, counting admitted, outage fail_closed.
	PlansFile string
	// ListByPlan makes tools/list, when the request carries a key, list
	// only the tools of the key's plan. Default false.
	ListByPlan bool
	// EventMaxLen is the approximate number of usage events kept in the
	// Redis stream restmcp:events (XADD MAXLEN ~); -1 turns usage events
	// off; 0 is invalid. Default 1000000. Without Redis, events are not
	// kept.
	EventMaxLen int64
	// Metrics serves GET /metrics (Prometheus text format). Default true.
	Metrics bool

	// IncludeTags, when not empty, serves only operations with at least
	// one of these tags (case-insensitive). Default: every operation.
	IncludeTags []string
	// ExcludeTags drops operations with any of these tags.
	ExcludeTags []string
	// IncludeOperations, when not empty, serves only operations whose
	// operationId or generated tool name matches one of these globs ("*"
	// any run of characters, "?" one character). Default: every operation.
	IncludeOperations []string
	// ExcludeOperations drops operations matching any of these globs.
	ExcludeOperations []string
	// IncludeMethods, when not empty, serves only operations with one of
	// these HTTP methods (case-insensitive). Default: every method.
	IncludeMethods []string
	// ExcludeMethods drops operations with any of these HTTP methods.
	ExcludeMethods []string
	// ToolNames names tools explicitly, by operationId; it wins over the
	// x-mcp-name operation extension. Names must match
	// ^[a-zA-Z0-9_-]{1,max_tool_name_length}$. Nil means none.
	ToolNames map[string]string
	// ToolAnnotations sets tool annotations by operationId
	// (openapi.Selection.Annotations: "readOnly idempotent !destructive").
	ToolAnnotations map[string]string
	// ServerVariables sets server URL variables by name (OAS Server
	// Variable Object): a variable not set takes the document's default, and
	// a value outside its enum fails startup naming the allowed values. Nil:
	// every default.
	ServerVariables map[string]string
	// ErrorCodes replaces the JSON-RPC codes of restmcp's own refusals, by
	// name: unauthorized (401), rate_limited (429), unavailable (503).
	// Values are integers; an absent name keeps its default (-31401,
	// -31429, -31503). Nil: the defaults.
	ErrorCodes map[string]string
	// PublicURL is the MCP endpoint's address as clients reach it
	// (https://mcp.example.com/mcp), for the client configurations the
	// banner and restmcp clients print. Empty: the listen address.
	PublicURL string
	// DefaultSecurity places the caller's key for operations of a document
	// that declares no security (openapi.LoadOptions.DefaultSecurity):
	// header:<Name>, header:Authorization:Bearer, query:<name>,
	// cookie:<name>, bearer or basic. Empty: none.
	DefaultSecurity string
	// CredentialParameters names ordinary document parameters that carry
	// the API key; they leave the schema and are filled from the caller's
	// key.
	CredentialParameters []string
	// ReportMaxTools is the tool count above which the startup report is
	// logged as a warning; -1 disables the check. Default 128.
	ReportMaxTools int
	// ReportMaxListBytes is the tools/list size in bytes above which the
	// startup report is logged as a warning; -1 disables the check.
	// Default 262144 (256 KiB).
	ReportMaxListBytes int
	// OutputSchemas lists each tool's outputSchema (R8: it describes the
	// 2xx response and never constrains it). False: tools have no
	// outputSchema; structuredContent is still sent for JSON objects.
	// Default true.
	OutputSchemas bool
	// SchemaBudget caps each tool's input schema in bytes; past it, the
	// deepest nested objects become placeholders, level by level (S2). -1:
	// no cap. Default 32768.
	SchemaBudget int
	// OutputSchemaBudget caps one output schema in bytes; deeper structure
	// is cut (S2). -1: no cap. Default 4096.
	OutputSchemaBudget int
	// OutputSchemasMaxListBytes drops every outputSchema when tools/list
	// with them would be larger than this many bytes (clients pay for the
	// list in tokens on every turn); structuredContent is still sent. -1:
	// never. Default 1 MiB.
	OutputSchemasMaxListBytes int
	// MaxDescriptionLength caps a tool description in characters (S10);
	// -1: no cap. Default 1024.
	MaxDescriptionLength int

	// ConfigFile is the YAML file the values were read from ("" when none);
	// informational, for the startup log.
	ConfigFile string
	// Args are the command-line arguments left after the flags (for example
	// a subcommand's operands), nil when there are none; Load does not
	// interpret them.
	Args []string
}

// Default returns a Config holding the Default* values.
func Default() Config {
	return Config{
		Spec:                       DefaultSpec,
		Upstream:                   DefaultUpstream,
		Lenient:                    DefaultLenient,
		Addr:                       DefaultAddr,
		MCPPath:                    DefaultMCPPath,
		OAuthMCPPath:               DefaultOAuthMCPPath,
		ToolMode:                   DefaultToolMode,
		ToolNameStyle:              NameSnake,
		TextContent:                TextFull,
		UpstreamErrors:             UpstreamErrorsError,
		LLMsTxt:                    true,
		Sessions:                   SessionsOff,
		SessionIdleTimeout:         30 * time.Minute,
		MaxSessions:                10_000,
		MaxSessionsPerAddress:      100,
		MaxStreamsPerSession:       4,
		MaxLegacyStreamsPerAddress: 16,
		OAuthRedirectURIs:          slices.Clone(DefaultOAuthRedirectURIs),
		OAuthRedirectSchemes:       slices.Clone(DefaultOAuthRedirectSchemes),
		OAuthRegisterLimit:         60,
		OAuthSignInLimit:           10,
		OAuthClientTTL:             24 * time.Hour,
		OAuthMaxClients:            10_000,
		IdPAlgorithms:              []string{"RS256", "ES256", "PS256"},
		IdPIdentityClaim:           "sub",
		IdPUpstream:                "exchange",
		RedisURL:                   DefaultRedisURL,
		RedisMode:                  DefaultRedisMode,
		RateLimit:                  DefaultRateLimit,
		RateWindow:                 DefaultRateWindow,
		UpstreamTimeout:            DefaultUpstreamTimeout,
		MeterTimeout:               DefaultMeterTimeout,
		MaxBodyBytes:               DefaultMaxBodyBytes,
		MaxResponseBytes:           DefaultMaxResponseBytes,
		MaxDownloadBytes:           64 << 20,
		AsyncWait:                  25 * time.Second,
		AsyncPollInterval:          time.Second,
		Tasks:                      TasksAuto,
		TaskTTL:                    time.Hour,
		MaxTasksPerKey:             100,
		MaxTasks:                   10_000,
		JQMaxMemoryBytes:           512 << 20,
		AllowedOrigins:             nil,
		MaxToolNameLength:          DefaultMaxToolNameLength,
		RequireKey:                 DefaultRequireKey,
		LogLevel:                   DefaultLogLevel,
		LogFormat:                  DefaultLogFormat,
		ShutdownTimeout:            DefaultShutdownTimeout,
		ReadHeaderTimeout:          DefaultReadHeaderTimeout,
		ReadTimeout:                DefaultReadTimeout,
		IdleTimeout:                DefaultIdleTimeout,
		MaxHeaderBytes:             DefaultMaxHeaderBytes,
		MaxConnections:             DefaultMaxConnections,
		PlansFile:                  DefaultPlansFile,
		ListByPlan:                 DefaultListByPlan,
		EventMaxLen:                DefaultEventMaxLen,
		Metrics:                    DefaultMetrics,

		ReportMaxTools:            DefaultReportMaxTools,
		ReportMaxListBytes:        DefaultReportMaxListBytes,
		OutputSchemas:             true,
		SchemaBudget:              DefaultSchemaBudget,
		OutputSchemaBudget:        DefaultOutputSchemaBudget,
		OutputSchemasMaxListBytes: 1 << 20,
		MaxDescriptionLength:      DefaultMaxDescriptionLength,
	}
}

// RateLimitEnabled reports whether tools/call is rate-limited (RateLimit != -1).
func (c Config) RateLimitEnabled() bool { return c.RateLimit != -1 }

// Validate checks every field and returns all problems joined with
// errors.Join, each starting with the setting's YAML key, or nil. It never
// prints the Redis URL.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}
	c.checkSources(bad)
	c.checkLimits(bad)
	c.checkPolicies(bad)
	c.checkSelection(bad)
	c.checkAPIs(bad)
	return errors.Join(errs...)
}

// problemFunc records one problem of the setting key.
type problemFunc func(key, format string, args ...any)

// checkSources checks the document, the upstream, the listen address and path, and Redis.
func (c Config) checkSources(bad problemFunc) {

	if err := checkSpec(c.Spec); err != nil {
		bad("spec", "%v", err)
	}
	if c.Upstream != "" {
		if err := checkHTTPURL(c.Upstream); err != nil {
			bad("upstream", "%v", err)
		}
	}
	if err := checkAddr(c.Addr); err != nil {
		bad("addr", "%v", err)
	}
	if err := checkPath(c.MCPPath); err != nil {
		bad("mcp_path", "%v", err)
	}
	if err := checkRedisURL(string(c.RedisURL)); err != nil {
		bad("redis_url", "%v", err)
	}
	switch c.RedisMode {
	case RedisSingle:
	case RedisCluster, RedisSentinel:
		if u, err := url.Parse(string(c.RedisURL)); err == nil && u.Scheme == "unix" {
			bad("redis_mode", "%s needs a redis:// or rediss:// URL listing its nodes, not a unix socket", c.RedisMode)
		}
	default:
		bad("redis_mode", "must be single, cluster or sentinel; got %q", string(c.RedisMode))
	}
}

// checkLimits checks the rate limit, timeouts, sizes, origins, tool names and logging.
func (c Config) checkLimits(bad problemFunc) {
	if c.RateLimit < 1 && c.RateLimit != -1 {
		bad("rate_limit", "must be at least 1, or -1 to disable rate limiting; got %d", c.RateLimit)
	}
	if c.RateWindow <= 0 {
		bad("rate_window", "must be positive; got %s", c.RateWindow)
	} else if c.RateWindow%time.Millisecond != 0 {
		bad("rate_window", "must be a whole number of milliseconds; got %s", c.RateWindow)
	}
	if c.UpstreamTimeout <= 0 {
		bad("upstream_timeout", "must be positive; got %s", c.UpstreamTimeout)
	}
	if c.MeterTimeout <= 0 {
		bad("meter_timeout", "must be positive; got %s", c.MeterTimeout)
	}
	if c.MaxBodyBytes <= 0 {
		bad("max_body_bytes", "must be positive; got %d", c.MaxBodyBytes)
	}
	if c.MaxResponseBytes <= 0 {
		bad("max_response_bytes", "must be positive; got %d", c.MaxResponseBytes)
	}
	if c.BinaryLinkBytes < 0 {
		bad("binary_link_bytes", "must be 0 (off) or positive; got %d", c.BinaryLinkBytes)
	}
	if c.AsyncWait < 0 {
		bad("async_wait", "must be 0 (off) or positive; got %s", c.AsyncWait)
	}
	if c.AsyncPollInterval < 100*time.Millisecond || c.AsyncPollInterval > time.Minute {
		bad("async_poll_interval", "must be from 100ms to 1m; got %s", c.AsyncPollInterval)
	}
	switch c.Tasks {
	case TasksAuto, TasksMemory, TasksOff:
	case TasksRedis:
		if c.RedisURL == "" {
			bad("tasks", "redis needs redis_url")
		}
	default:
		bad("tasks", "must be auto, memory, redis or off; got %q", c.Tasks)
	}
	if c.TaskTTL < time.Minute || c.TaskTTL > 7*24*time.Hour {
		bad("task_ttl", "must be from 1m to 168h (7 days); got %s", c.TaskTTL)
	}
	if c.MaxTasksPerKey < 1 {
		bad("max_tasks_per_key", "must be 1 or more; got %d", c.MaxTasksPerKey)
	}
	if c.MaxTasks < 1 {
		bad("max_tasks", "must be 1 or more; got %d", c.MaxTasks)
	}
	if c.MaxDownloadBytes <= 0 {
		bad("max_download_bytes", "must be positive; got %d", c.MaxDownloadBytes)
	}
	if c.JQMaxMemoryBytes < 64<<20 {
		bad("jq_max_memory_bytes", "must be at least 67108864 (64 MiB): a jq worker needs that much to start; got %d", c.JQMaxMemoryBytes)
	}
	for _, o := range c.AllowedOrigins {
		if err := checkOrigin(o); err != nil {
			bad("allowed_origins", "%q: %v", o, err)
		}
	}
	if c.MaxToolNameLength < MinToolNameLength || c.MaxToolNameLength > MaxToolNameLength {
		bad("max_tool_name_length", "must be from %d to %d; got %d", MinToolNameLength, MaxToolNameLength, c.MaxToolNameLength)
	}
	switch c.LogLevel {
	case slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError:
	default:
		bad("log_level", "must be debug, info, warn or error; got %s", c.LogLevel)
	}
	switch c.LogFormat {
	case LogFormatText, LogFormatJSON:
	default:
		bad("log_format", "must be text or json; got %q", string(c.LogFormat))
	}
	if c.ShutdownTimeout <= 0 {
		bad("shutdown_timeout", "must be positive; got %s", c.ShutdownTimeout)
	}
	for _, d := range []struct {
		key string
		d   time.Duration
	}{{"read_header_timeout", c.ReadHeaderTimeout}, {"read_timeout", c.ReadTimeout}, {"idle_timeout", c.IdleTimeout}} {
		if d.d <= 0 {
			bad(d.key, "must be positive; got %s", d.d)
		}
	}
	if c.MaxHeaderBytes <= 0 {
		bad("max_header_bytes", "must be positive; got %d", c.MaxHeaderBytes)
	}
	if c.MaxConnections <= 0 {
		bad("max_connections", "must be positive; got %d", c.MaxConnections)
	}
}

// checkPolicies checks error codes, the public URL, public mode, proxies, upstream hosts, plans and events.
func (c Config) checkPolicies(bad problemFunc) {
	for _, name := range slices.Sorted(maps.Keys(c.ErrorCodes)) {
		v := c.ErrorCodes[name]
		switch name {
		case "unauthorized", "rate_limited", "unavailable":
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n == 0 {
				bad("error_codes", "%s: %q is not a non-zero integer", name, v)
			}
		default:
			bad("error_codes", "%q is not one of unauthorized, rate_limited, unavailable", name)
		}
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("public_url", "must be an http or https URL; got %q", c.PublicURL)
		}
	}
	c.validateIdP(bad)
	if c.PublicGlobalPlan != "" && !c.PublicMode {
		bad("public_global_plan", "needs public_mode: true")
	}
	if c.ReloadInterval < 0 {
		bad("reload_interval", "must not be negative; got %v", c.ReloadInterval)
	}
	switch c.Sessions {
	case SessionsOff, SessionsMemory:
	case SessionsRedis:
		if c.RedisURL == "" {
			bad("sessions", "redis needs redis_url")
		}
	default:
		bad("sessions", "must be off, memory or redis; got %q", c.Sessions)
	}
	if c.SessionIdleTimeout <= 0 {
		bad("session_idle_timeout", "must be positive; got %v", c.SessionIdleTimeout)
	}
	for _, v := range []struct {
		key string
		n   int
	}{{"max_sessions", c.MaxSessions}, {"max_sessions_per_address", c.MaxSessionsPerAddress},
		{"max_streams_per_session", c.MaxStreamsPerSession}, {"max_legacy_streams_per_address", c.MaxLegacyStreamsPerAddress}} {
		if v.n < 0 {
			bad(v.key, "must be 0 (no cap) or more; got %d", v.n)
		}
	}
	if c.MaxConcurrentCalls < 0 {
		bad("max_concurrent_calls", "must be 0 (no cap) or more; got %d", c.MaxConcurrentCalls)
	}
	if c.MaxConcurrentCallsPerHost < 0 {
		bad("max_concurrent_calls_per_host", "must be 0 (no cap) or more; got %d", c.MaxConcurrentCallsPerHost)
	}
	if c.UpstreamErrors != UpstreamErrorsError && c.UpstreamErrors != UpstreamErrorsEmptyArray {
		bad("upstream_errors", "must be error or empty_array; got %q", c.UpstreamErrors)
	}
	if c.TextContent != TextFull && c.TextContent != TextReceipt {
		bad("text_content", "must be full or receipt; got %q", c.TextContent)
	}
	switch c.ToolNameStyle {
	case NameSnake, NameKebab, NameAsIs:
	default:
		bad("tool_name_style", "must be snake, kebab or as_is; got %q", c.ToolNameStyle)
	}
	if c.ToolMode != ToolModeFull && c.ToolMode != ToolModeCompact {
		bad("tool_mode", "must be full or compact; got %q", c.ToolMode)
	}
	if c.MarkdownPage != "" {
		if err := checkPath(c.MarkdownPage); err != nil {
			bad("markdown_page", "%v", err)
		} else if c.MarkdownPage == c.MCPPath || c.MarkdownPage == c.LegacySSEPath {
			bad("markdown_page", "%q is an MCP endpoint's path too; the page needs its own", c.MarkdownPage)
		}
	}
	if c.LegacySSEPath != "" {
		if err := checkPath(c.LegacySSEPath); err != nil {
			bad("legacy_sse_path", "%v", err)
		} else if c.LegacySSEPath == c.MCPPath {
			bad("legacy_sse_path", "%q is mcp_path too; each transport needs its own path", c.LegacySSEPath)
		}
	}
	c.checkOAuth(bad)
	for _, p := range c.TrustedProxies {
		if _, _, err := net.ParseCIDR(p); err != nil && net.ParseIP(p) == nil {
			bad("trusted_proxies", "%q is not an IP address or CIDR range", p)
		}
	}
	for _, h := range c.UpstreamHosts {
		if h == "" || strings.ContainsAny(h, "/?#@ ") {
			bad("upstream_hosts", "%q is not a host or host:port", h)
		}
	}
	if strings.TrimSpace(c.PlansFile) != c.PlansFile {
		bad("plans_file", "has leading or trailing spaces")
	}
	if c.EventMaxLen < 1 && c.EventMaxLen != -1 {
		bad("event_max_len", "must be at least 1, or -1 to turn usage events off; got %d", c.EventMaxLen)
	}
}

// checkOAuth checks the OAuth front's settings (oauth_*), and public_url's
// scheme when the front is on.
func (c Config) checkOAuth(bad problemFunc) {
	if c.OAuth {
		if err := checkPath(c.OAuthMCPPath); err != nil {
			bad("oauth_mcp_path", "%v", err)
		} else if c.OAuthMCPPath == c.MCPPath {
			bad("oauth_mcp_path", "%q is mcp_path too; OAuth clients and header clients need one path each", c.OAuthMCPPath)
		}
		if c.OAuthRegisterLimit < 0 {
			bad("oauth_register_limit", "must be 0 (no limit) or more, got %d", c.OAuthRegisterLimit)
		}
		if c.OAuthSignInLimit < 0 {
			bad("oauth_signin_limit", "must be 0 (no limit) or more, got %d", c.OAuthSignInLimit)
		}
		if c.OAuthClientTTL < time.Minute {
			bad("oauth_client_ttl", "must be at least 1m, got %s", c.OAuthClientTTL)
		}
		if c.OAuthMaxClients < 1 {
			bad("oauth_max_clients", "must be 1 or more, got %d", c.OAuthMaxClients)
		}
		for _, issuer := range slices.Sorted(maps.Keys(c.OAuthEnterpriseIdPs)) {
			if u, err := url.Parse(issuer); err != nil || u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())) || u.Host == "" {
				bad("oauth_enterprise_idps", "%q is not an issuer URL (https, or http on loopback)", issuer)
			}
			if !envName.MatchString(c.OAuthEnterpriseIdPs[issuer]) {
				bad("oauth_enterprise_idps", "%q: %q is not the name of an environment variable (letters, digits and _), which holds the API key", issuer, c.OAuthEnterpriseIdPs[issuer])
			}
		}
		if c.OAuthEncryptionKey == "" && c.RedisURL != "" {
			bad("oauth_encryption_key", "is required with redis_url: every replica must open the keys sealed in Redis (make one with: openssl rand -base64 32)")
		}
		if c.PublicURL != "" {
			if u, err := url.Parse(c.PublicURL); err == nil && u.Scheme == "http" && !isLoopback(u.Hostname()) {
				bad("public_url", "must be https for oauth: codes and tokens would cross the network in the clear (http is allowed on loopback only); got %q", c.PublicURL)
			}
		}
	}
	if !c.OAuth && len(c.OAuthEnterpriseIdPs) > 0 {
		bad("oauth_enterprise_idps", "needs oauth: the assertions are taken by the OAuth front's token endpoint")
	}
	if c.OAuthEncryptionKey != "" {
		if _, err := c.OAuthKey(); err != nil {
			bad("oauth_encryption_key", "%v", err)
		}
	}
	for _, r := range c.OAuthRedirectURIs {
		if u, err := url.Parse(strings.TrimSuffix(r, "/*")); err != nil || u.Scheme != "https" || u.Host == "" || u.Fragment != "" || strings.Contains(r, "#") {
			bad("oauth_redirect_uris", "%q is not an https URL without a fragment, or a pattern https://host/path/*", r)
		}
	}
}

// checkSelection checks the operation selection and the tool report and schema caps.
func (c Config) checkSelection(bad problemFunc) {
	for _, l := range []struct {
		key     string
		methods []string
	}{{"include_methods", c.IncludeMethods}, {"exclude_methods", c.ExcludeMethods}} {
		for _, m := range l.methods {
			if !httpMethods[strings.ToUpper(m)] {
				bad(l.key, "unknown HTTP method %q (use get, put, post, delete, options, head, patch or trace)", m)
			}
		}
	}
	ids := make([]string, 0, len(c.ToolNames))
	for id := range c.ToolNames {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if name := c.ToolNames[id]; !validToolName(name, c.MaxToolNameLength) {
			bad("tool_names", "%s: %q must be 1 to %d characters from A-Z a-z 0-9 _ -", id, name, c.MaxToolNameLength)
		}
	}
	if c.ReportMaxTools < 1 && c.ReportMaxTools != -1 {
		bad("report_max_tools", "must be at least 1, or -1 to disable the warning; got %d", c.ReportMaxTools)
	}
	if c.MaxDescriptionLength < 16 && c.MaxDescriptionLength != -1 {
		bad("max_description_length", "must be at least 16, or -1 for no cap; got %d", c.MaxDescriptionLength)
	}
	if c.SchemaBudget < 1 && c.SchemaBudget != -1 {
		bad("schema_budget_bytes", "must be at least 1, or -1 for no cap; got %d", c.SchemaBudget)
	}
	if c.OutputSchemasMaxListBytes < 1 && c.OutputSchemasMaxListBytes != -1 {
		bad("output_schemas_max_list_bytes", "must be at least 1, or -1 to keep output schemas whatever the size; got %d", c.OutputSchemasMaxListBytes)
	}
	if c.OutputSchemaBudget < 1 && c.OutputSchemaBudget != -1 {
		bad("output_schema_budget", "must be at least 1, or -1 for no cap; got %d", c.OutputSchemaBudget)
	}
	if c.ReportMaxListBytes < 1 && c.ReportMaxListBytes != -1 {
		bad("report_max_list_bytes", "must be at least 1, or -1 to disable the warning; got %d", c.ReportMaxListBytes)
	}
}

// LogValue summarizes the configuration for the startup log: the spec
// ("(bundled demo)" when empty), the metering store (memory or redis, never
// the Redis URL), the config file when one was read, and every setting
// whose value differs from its default, by its config file key and as an
// environment variable would give it.
func (c Config) LogValue() slog.Value {
	spec := c.Spec
	switch {
	case len(c.APIs) > 0:
		names := make([]string, len(c.APIs))
		for i, a := range c.APIs {
			names[i] = a.Name + "=" + a.Spec
		}
		spec = "(apis) " + strings.Join(names, ",")
	case spec == "":
		spec = "(bundled demo)"
	}
	metering := "memory"
	if c.RedisURL != "" {
		metering = "redis"
	}
	attrs := []slog.Attr{slog.String("spec", spec), slog.String("metering", metering)}
	if c.ConfigFile != "" {
		attrs = append(attrs, slog.String("config_file", c.ConfigFile))
	}
	def := Default()
	for _, s := range table() {
		if s.field == nil || s.Key == "spec" {
			continue
		}
		if _, secret := s.field(&c).(*Secret); secret {
			continue // said by metering
		}
		if v := formatValue(s.field(&c)); v != formatValue(s.field(&def)) {
			attrs = append(attrs, slog.String(s.Key, v))
		}
	}
	return slog.GroupValue(attrs...)
}

func checkSpec(s string) error {
	if s == "" {
		return nil
	}
	if strings.TrimSpace(s) != s {
		return errors.New("has leading or trailing spaces")
	}
	if i := strings.Index(s, "://"); i > 0 && !strings.ContainsAny(s[:i], `/\.`) {
		// Looks like a URL; only http(s) is fetched. Anything else is a file
		// path (Windows drive letters have no "//").
		return checkHTTPURL(s)
	}
	return nil
}

func checkHTTPURL(s string) error {
	if !strings.Contains(s, "://") {
		// host:port or host/path: the scheme is missing (url.Parse would
		// say "first path segment in URL cannot contain colon").
		if _, _, err := net.SplitHostPort(strings.SplitN(s, "/", 2)[0]); err == nil || !strings.Contains(s, ":") {
			return fmt.Errorf("has no scheme: add http:// or https://, e.g. %q", "http://"+s)
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a valid URL: %w", unwrapURLError(err))
	}
	shown := u.Redacted() // never echo a password
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("must be an http or https URL; got %q", shown)
	}
	if u.Host == "" {
		return fmt.Errorf("URL has no host: %q", shown)
	}
	if u.User != nil {
		return errors.New("URL must not contain credentials")
	}
	if u.Fragment != "" {
		return fmt.Errorf("URL must not have a fragment: %q", shown)
	}
	return nil
}

func checkAddr(s string) error {
	// An empty host ("":8080") means every interface.
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("must be host:port (e.g. %s or 0.0.0.0:8080); got %q", DefaultAddr, s)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port must be a number from 0 to 65535; got %q", port)
	}
	return nil
}

func checkPath(s string) error {
	switch {
	case s == "" || s[0] != '/':
		return fmt.Errorf("must start with /; got %q", s)
	case s == "/":
		return nil // the MCP endpoint at the root; /health, /ready and the discovery routes stay theirs
	case strings.HasSuffix(s, "/"):
		return fmt.Errorf("must not end with /; got %q", s)
	case strings.ContainsAny(s, "?#:* \t\r\n"):
		return fmt.Errorf("must be a plain path without ?, #, :, * or spaces; got %q", s)
	case strings.Contains(s, "//"):
		return fmt.Errorf("must not contain //; got %q", s)
	}
	return nil
}

// checkRedisURL checks the URL's shape without ever echoing it: it may hold a
// password. go-redis ParseURL does the full check at startup.
func checkRedisURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("not a valid URL (value not shown: it may contain a password)")
	}
	switch u.Scheme {
	case "redis", "rediss":
		if u.Host == "" {
			return errors.New("redis:// and rediss:// URLs need a host, as in redis://127.0.0.1:6379/0")
		}
	case "unix":
		if u.Path == "" {
			return errors.New("unix:// URLs need a socket path, as in unix:///run/redis.sock")
		}
	default:
		return fmt.Errorf("scheme must be redis, rediss or unix; got %q", u.Scheme)
	}
	return nil
}

func checkOrigin(s string) error {
	if s == "*" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a valid origin: %w", unwrapURLError(err))
	}
	if u.Scheme == "" || u.Host == "" {
		return errors.New(`must be "scheme://host[:port]" (e.g. https://app.example.com) or "*"`)
	}
	if u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return errors.New("an origin has no path, query, fragment or user info (drop the trailing /)")
	}
	if s != strings.ToLower(s) {
		return errors.New("must be lower-case")
	}
	return nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// levelName is the lower-case name Settings and flags use for a level.
func levelName(l slog.Level) string {
	switch l {
	case slog.LevelDebug:
		return "debug"
	case slog.LevelInfo:
		return "info"
	case slog.LevelWarn:
		return "warn"
	case slog.LevelError:
		return "error"
	}
	return l.String()
}

// httpMethods are the methods an OpenAPI path item can hold.
var httpMethods = map[string]bool{"GET": true, "PUT": true, "POST": true, "DELETE": true, "OPTIONS": true, "HEAD": true, "PATCH": true, "TRACE": true}

// validToolName reports whether s matches ^[a-zA-Z0-9_-]{1,max}$.
func validToolName(s string, max int) bool {
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

// DefaultOAuthRedirectURIs are the https redirect URIs OAuth clients may
// register by default: the callbacks of Claude's, ChatGPT's (one path
// segment per connector, and the older fixed one) and Cursor's hosted
// connectors.
var DefaultOAuthRedirectURIs = []string{
	"https://claude.ai/api/mcp/auth_callback",
	"https://claude.com/api/mcp/auth_callback",
	"https://chatgpt.com/connector/oauth/*",
	"https://chatgpt.com/connector_platform_oauth_redirect",
	"https://www.cursor.com/agents/mcp/oauth/callback",
}

// envName is the form of an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// DefaultOAuthRedirectSchemes are the private-use URI schemes native apps
// may register redirect URIs with by default (RFC 8252 §7.1).
var DefaultOAuthRedirectSchemes = []string{"cursor", "vscode", "vscode-insiders", "windsurf", "claude"}

// OAuthKey decodes OAuthEncryptionKey: 32 bytes in standard or URL-safe
// base64, padded or not. Empty gives nil.
func (c Config) OAuthKey() ([]byte, error) {
	v := strings.TrimRight(strings.TrimSpace(string(c.OAuthEncryptionKey)), "=")
	if v == "" {
		return nil, nil
	}
	b, err := base64.RawStdEncoding.DecodeString(v)
	if err != nil {
		b, err = base64.RawURLEncoding.DecodeString(v)
	}
	if err != nil {
		return nil, errors.New("is not base64 (make one with: openssl rand -base64 32)")
	}
	if len(b) != 32 {
		return nil, fmt.Errorf("must be 32 bytes once decoded, got %d (make one with: openssl rand -base64 32)", len(b))
	}
	return b, nil
}

// isLoopback reports whether host is localhost or a loopback IP.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validateIdP checks the resource-server settings (idp_*).
func (c Config) validateIdP(bad problemFunc) {
	if c.IdPIssuer == "" {
		return
	}
	if err := checkHTTPURL(c.IdPIssuer); err != nil {
		bad("idp_issuer", "%v", err)
	}
	if c.IdPAudience != "" {
		if err := checkHTTPURL(c.IdPAudience); err != nil {
			bad("idp_audience", "%v", err)
		}
	}
	for _, a := range c.IdPAlgorithms {
		switch a {
		case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA":
		default:
			bad("idp_algorithms", "%q is not an accepted algorithm: one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA (never none or HS*: a provider's keys are public)", a)
		}
	}
	if len(c.IdPAlgorithms) == 0 {
		bad("idp_algorithms", "must name at least one algorithm")
	}
	if c.IdPIdentityClaim == "" {
		bad("idp_identity_claim", "must name a claim (sub, client_id, email, …)")
	}
	switch c.IdPUpstream {
	case "forward":
	case "key":
		if c.OAuthEncryptionKey == "" {
			bad("oauth_encryption_key", "is needed for idp_upstream: key (the keys bound to identities are kept sealed with it)")
		}
		if c.RedisURL == "" {
			bad("idp_upstream", "key needs redis_url: the keys bound to identities live in the key registry (restmcp keys create --identity)")
		}
	case "exchange":
		if c.IdPClientID == "" {
			bad("idp_client_id", "is needed for idp_upstream: exchange (restmcp's client at the identity provider)")
		}
		if c.IdPExchangeAudience == "" {
			bad("idp_exchange_audience", "is needed for idp_upstream: exchange (the audience of the token the upstream API accepts)")
		}
	default:
		bad("idp_upstream", "must be exchange, forward or key; got %q", c.IdPUpstream)
	}
}
