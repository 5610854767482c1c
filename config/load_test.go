package config

import (
	"errors"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// env turns a map into a getenv function.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// writeFile writes a config file into a fresh temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const fullFile = `# every setting, each different from its default
spec: ./file-spec.yaml
upstream: http://file.example:9000
ref_root: ./file-root
addr: 127.0.0.1:7001
mcp_path: /file-mcp
redis_url: redis://:filepass@127.0.0.1:6379/1
rate_limit: 7
rate_window: 7s
upstream_timeout: 17s
meter_timeout: 4s
max_body_bytes: 7000
max_response_bytes: 700
allowed_origins:
  - https://file.example
max_tool_name_length: 40
require_key: false
log_level: warn
log_format: json
shutdown_timeout: 27s
`

var fullEnv = map[string]string{
	"RESTMCP_SPEC":                           "https://env.example/openapi.json",
	"RESTMCP_UPSTREAM":                       "http://env.example:9001",
	"RESTMCP_OVERLAY":                        "fix-a.yaml,fix-b.yaml",
	"RESTMCP_REF_ROOT":                       "/env/root",
	"RESTMCP_LENIENT":                        "false",
	"RESTMCP_ADDR":                           "0.0.0.0:7002",
	"RESTMCP_MCP_PATH":                       "/env-mcp",
	"RESTMCP_REDIS_URL":                      "redis://:envpass@redis:6379/2",
	"RESTMCP_REDIS_MODE":                     "cluster",
	"RESTMCP_RATE_LIMIT":                     "-1",
	"RESTMCP_RATE_WINDOW":                    "2m",
	"RESTMCP_UPSTREAM_TIMEOUT":               "5s",
	"RESTMCP_METER_TIMEOUT":                  "6s",
	"RESTMCP_MAX_BODY_BYTES":                 "2048",
	"RESTMCP_MAX_RESPONSE_BYTES":             "4096",
	"RESTMCP_ALLOWED_ORIGINS":                "https://a.example, https://B.example/ ,",
	"RESTMCP_MAX_TOOL_NAME_LENGTH":           "48",
	"RESTMCP_REQUIRE_KEY":                    "true",
	"RESTMCP_LOG_LEVEL":                      "DEBUG",
	"RESTMCP_LOG_FORMAT":                     "text",
	"RESTMCP_SHUTDOWN_TIMEOUT":               "1s",
	"RESTMCP_READ_HEADER_TIMEOUT":            "2s",
	"RESTMCP_READ_TIMEOUT":                   "4s",
	"RESTMCP_IDLE_TIMEOUT":                   "8s",
	"RESTMCP_MAX_HEADER_BYTES":               "8192",
	"RESTMCP_MAX_CONNECTIONS":                "64",
	"RESTMCP_UPSTREAM_HOSTS":                 "eu.env.example, uploads.env.example:8443",
	"RESTMCP_PUBLIC_MODE":                    "true",
	"RESTMCP_PUBLIC_GLOBAL_PLAN":             "everyone",
	"RESTMCP_TRUSTED_PROXIES":                "10.0.0.0/8, 127.0.0.1",
	"RESTMCP_OUTPUT_SCHEMAS":                 "false",
	"RESTMCP_OUTPUT_SCHEMA_BUDGET":           "-1",
	"RESTMCP_MAX_DESCRIPTION_LENGTH":         "512",
	"RESTMCP_SERVER_VARIABLES":               "region=eu, version = v2",
	"RESTMCP_DEFAULT_SECURITY":               "header:Authorization:Bearer",
	"RESTMCP_PUBLIC_URL":                     "https://mcp.env.example/mcp",
	"RESTMCP_SCHEMA_BUDGET_BYTES":            "16384",
	"RESTMCP_TOOL_MODE":                      "compact",
	"RESTMCP_SERVER_NAME":                    "Env MCP",
	"RESTMCP_LEGACY_SSE_PATH":                "/sse",
	"RESTMCP_STRICT_ARGUMENTS":               "true",
	"RESTMCP_RESOURCES":                      "bankscope://v1/metrics=get_metrics",
	"RESTMCP_ERROR_STRUCTURED_CONTENT":       "true",
	"RESTMCP_UPSTREAM_ERRORS":                "empty_array",
	"RESTMCP_PROTOCOL_VERSIONS":              "2025-03-26,2025-06-18",
	"RESTMCP_MAX_CONCURRENT_CALLS":           "6",
	"RESTMCP_MAX_CONCURRENT_CALLS_PER_HOST":  "3",
	"RESTMCP_TEXT_CONTENT":                   "receipt",
	"RESTMCP_TOOL_NAME_STYLE":                "kebab",
	"RESTMCP_FORWARD_HEADERS":                "X-Integration, X-Culture",
	"RESTMCP_UNAUTHORIZED_MESSAGE":           "Unauthorized. Register.",
	"RESTMCP_RATE_LIMITED_MESSAGE":           "Slow down.",
	"RESTMCP_UNKNOWN_TOOL_NOT_FOUND":         "true",
	"RESTMCP_UNKNOWN_METHOD_NOT_FOUND":       "true",
	"RESTMCP_ACCEPT_REQUESTS_WITHOUT_ID":     "true",
	"RESTMCP_JQ_MAX_MEMORY_BYTES":            "134217728",
	"RESTMCP_JQ_FILTER":                      "true",
	"RESTMCP_STREAM_ACCEPT_STRICT":           "true",
	"RESTMCP_ORIGIN_REFUSAL_TEXT":            "true",
	"RESTMCP_RESPONSE_META":                  "true",
	"RESTMCP_MARKDOWN_PAGE":                  "/docs/v2_mcp.md",
	"RESTMCP_MAX_SESSIONS":                   "50",
	"RESTMCP_MAX_SESSIONS_PER_ADDRESS":       "5",
	"RESTMCP_MAX_STREAMS_PER_SESSION":        "2",
	"RESTMCP_MAX_LEGACY_STREAMS_PER_ADDRESS": "3",
	"RESTMCP_SERVER_VERSION":                 "9.9",
	"RESTMCP_LLMS_TXT":                       "false",
	"RESTMCP_SERVE_OPENAPI":                  "true",
	"RESTMCP_TIMING_META":                    "true",
	"RESTMCP_OUTPUT_SCHEMAS_MAX_LIST_BYTES":  "-1",
	"RESTMCP_WATCH":                          "true",
	"RESTMCP_SESSIONS":                       "redis",
	"RESTMCP_SESSION_IDLE_TIMEOUT":           "5m",
	"RESTMCP_RELOAD_INTERVAL":                "45s",
	"RESTMCP_OAUTH":                          "true",
	"RESTMCP_OAUTH_MCP_PATH":                 "/env-oauth-mcp",
	"RESTMCP_OAUTH_ENCRYPTION_KEY":           "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
	"RESTMCP_OAUTH_KEYS_URL":                 "https://env.example/keys",
	"RESTMCP_OAUTH_REDIRECT_URIS":            "https://a.example/cb,https://b.example/cb/*",
	"RESTMCP_OAUTH_REDIRECT_SCHEMES":         "myapp",
	"RESTMCP_OAUTH_REGISTER_LIMIT":           "0",
	"RESTMCP_OAUTH_SIGNIN_LIMIT":             "5",
	"RESTMCP_OAUTH_CLIENT_TTL":               "2h",
	"RESTMCP_OAUTH_MAX_CLIENTS":              "50",
	"RESTMCP_OAUTH_ENTERPRISE_IDPS":          "https://acme.okta.example=ACME_API_KEY",
	"RESTMCP_OAUTH_VERIFY_OPERATION":         "status_get",
	"RESTMCP_ERROR_CODES":                    "unauthorized=-32001, rate_limited=-32029",
	"RESTMCP_CREDENTIAL_PARAMETERS":          "api_key",
	"RESTMCP_PLANS_FILE":                     "env-plans.yaml",
	"RESTMCP_LIST_BY_PLAN":                   "true",
	"RESTMCP_EVENT_MAX_LEN":                  "500",
	"RESTMCP_METRICS":                        "false",

	"RESTMCP_INCLUDE_TAGS":          "pets, store",
	"RESTMCP_EXCLUDE_TAGS":          "admin",
	"RESTMCP_INCLUDE_OPERATIONS":    "list*,get?et",
	"RESTMCP_EXCLUDE_OPERATIONS":    "*Internal*",
	"RESTMCP_INCLUDE_METHODS":       "get,POST",
	"RESTMCP_EXCLUDE_METHODS":       "delete",
	"RESTMCP_TOOL_NAMES":            "listPets=pets, getPet = pet",
	"RESTMCP_TOOL_ANNOTATIONS":      "searchPets=readOnly idempotent",
	"RESTMCP_BINARY_LINK_BYTES":     "1048576",
	"RESTMCP_MAX_DOWNLOAD_BYTES":    "33554432",
	"RESTMCP_ASYNC_WAIT":            "12s",
	"RESTMCP_ASYNC_POLL_INTERVAL":   "2s",
	"RESTMCP_IDP_ISSUER":            "https://login.example.com/realms/acme",
	"RESTMCP_IDP_AUDIENCE":          "https://mcp.example.com/mcp",
	"RESTMCP_IDP_ALGORITHMS":        "ES256",
	"RESTMCP_IDP_IDENTITY_CLAIM":    "client_id",
	"RESTMCP_IDP_PLAN_CLAIM":        "tier",
	"RESTMCP_IDP_UPSTREAM":          "forward",
	"RESTMCP_IDP_CLIENT_ID":         "restmcp",
	"RESTMCP_IDP_CLIENT_SECRET":     "s3cret",
	"RESTMCP_IDP_EXCHANGE_AUDIENCE": "https://api.example.com",
	"RESTMCP_TASKS":                 "memory",
	"RESTMCP_TASK_TTL":              "30m",
	"RESTMCP_MAX_TASKS_PER_KEY":     "5",
	"RESTMCP_MAX_TASKS":             "500",
	"RESTMCP_REPORT_MAX_TOOLS":      "40",
	"RESTMCP_REPORT_MAX_LIST_BYTES": "-1",
}

var fullFlags = []string{
	"--spec", "flag-spec.json",
	"--upstream=https://flag.example/v2",
	"--overlay", "flag-a.yaml",
	"--overlay", "flag-b.yaml",
	"--ref-root", "flag-root",
	"--lenient",
	"--addr", ":7003",
	"--mcp-path", "/flag-mcp",
	"--rate-limit", "3",
	"--rate-window", "3s",
	"--upstream-timeout", "3s",
	"--meter-timeout", "7s",
	"--max-body-bytes", "3000",
	"--max-response-bytes", "300",
	"--allowed-origins", "https://c.example",
	"--allowed-origins", "http://localhost:3000",
	"--max-tool-name-length", "32",
	"--require-key=false",
	"--log-level", "error",
	"--log-format", "json",
	"--shutdown-timeout", "3s",
}

func TestLoadPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "restmcp.yaml")
	if err := os.WriteFile(file, []byte(fullFile), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.yaml")
	if err := os.WriteFile(other, []byte("addr: 127.0.0.1:7009\nrate_limit: 9\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	fromFile := Default()
	fromFile.ConfigFile = file
	fromFile.Spec = "./file-spec.yaml"
	fromFile.Upstream = "http://file.example:9000"
	fromFile.RefRoot = "./file-root"
	fromFile.Addr = "127.0.0.1:7001"
	fromFile.MCPPath = "/file-mcp"
	fromFile.RedisURL = "redis://:filepass@127.0.0.1:6379/1"
	fromFile.RateLimit = 7
	fromFile.RateWindow = 7 * time.Second
	fromFile.UpstreamTimeout = 17 * time.Second
	fromFile.MeterTimeout = 4 * time.Second
	fromFile.MaxBodyBytes = 7000
	fromFile.MaxResponseBytes = 700
	fromFile.AllowedOrigins = []string{"https://file.example"}
	fromFile.MaxToolNameLength = 40
	fromFile.RequireKey = false
	fromFile.LogLevel = slog.LevelWarn
	fromFile.LogFormat = LogFormatJSON
	fromFile.ShutdownTimeout = 27 * time.Second

	fromEnv := fromFile
	fromEnv.Spec = "https://env.example/openapi.json"
	fromEnv.Upstream = "http://env.example:9001"
	fromEnv.Overlays = []string{"fix-a.yaml", "fix-b.yaml"}
	fromEnv.RefRoot = "/env/root"
	fromEnv.Lenient = false
	fromEnv.Addr = "0.0.0.0:7002"
	fromEnv.MCPPath = "/env-mcp"
	fromEnv.RedisURL = "redis://:envpass@redis:6379/2"
	fromEnv.RedisMode = RedisCluster
	fromEnv.RateLimit = -1
	fromEnv.RateWindow = 2 * time.Minute
	fromEnv.UpstreamTimeout = 5 * time.Second
	fromEnv.MeterTimeout = 6 * time.Second
	fromEnv.MaxBodyBytes = 2048
	fromEnv.MaxResponseBytes = 4096
	fromEnv.AllowedOrigins = []string{"https://a.example", "https://b.example"}
	fromEnv.MaxToolNameLength = 48
	fromEnv.RequireKey = true
	fromEnv.LogLevel = slog.LevelDebug
	fromEnv.LogFormat = LogFormatText
	fromEnv.ShutdownTimeout = time.Second
	fromEnv.ReadHeaderTimeout = 2 * time.Second
	fromEnv.ReadTimeout = 4 * time.Second
	fromEnv.IdleTimeout = 8 * time.Second
	fromEnv.MaxHeaderBytes = 8192
	fromEnv.MaxConnections = 64
	fromEnv.UpstreamHosts = []string{"eu.env.example", "uploads.env.example:8443"}
	fromEnv.PublicMode = true
	fromEnv.PublicGlobalPlan = "everyone"
	fromEnv.TrustedProxies = []string{"10.0.0.0/8", "127.0.0.1"}
	fromEnv.OutputSchemas = false
	fromEnv.OutputSchemaBudget = -1
	fromEnv.MaxDescriptionLength = 512
	fromEnv.ServerVariables = map[string]string{"region": "eu", "version": "v2"}
	fromEnv.DefaultSecurity = "header:Authorization:Bearer"
	fromEnv.PublicURL = "https://mcp.env.example/mcp"
	fromEnv.SchemaBudget = 16384
	fromEnv.ToolMode = "compact"
	fromEnv.ServerName, fromEnv.ServerVersion = "Env MCP", "9.9"
	fromEnv.ForwardHeaders = []string{"X-Integration", "X-Culture"}
	fromEnv.ToolNameStyle = "kebab"
	fromEnv.StrictArguments = true
	fromEnv.TextContent = "receipt"
	fromEnv.ErrorStructuredContent, fromEnv.UpstreamErrors = true, "empty_array"
	fromEnv.LegacySSEPath = "/sse"
	fromEnv.Resources = map[string]string{"bankscope://v1/metrics": "get_metrics"}
	fromEnv.ProtocolVersions = []string{"2025-03-26", "2025-06-18"}
	fromEnv.MaxConcurrentCalls, fromEnv.MaxConcurrentCallsPerHost = 6, 3
	fromEnv.UnauthorizedMessage, fromEnv.RateLimitedMessage, fromEnv.UnknownToolNotFound = "Unauthorized. Register.", "Slow down.", true
	fromEnv.UnknownMethodNotFound, fromEnv.StreamAcceptStrict, fromEnv.OriginRefusalText, fromEnv.ResponseMeta = true, true, true, true
	fromEnv.AcceptRequestsWithoutID = true
	fromEnv.JQMaxMemoryBytes = 128 << 20
	fromEnv.MarkdownPage = "/docs/v2_mcp.md"
	fromEnv.JQFilter = true
	fromEnv.MaxSessions, fromEnv.MaxSessionsPerAddress, fromEnv.MaxStreamsPerSession, fromEnv.MaxLegacyStreamsPerAddress = 50, 5, 2, 3
	fromEnv.LLMsTxt, fromEnv.ServeOpenAPI, fromEnv.TimingMeta = false, true, true
	fromEnv.OutputSchemasMaxListBytes = -1
	fromEnv.Watch = true
	fromEnv.Sessions = "redis"
	fromEnv.SessionIdleTimeout = 5 * time.Minute
	fromEnv.ReloadInterval = 45 * time.Second
	fromEnv.OAuth = true
	fromEnv.OAuthMCPPath = "/env-oauth-mcp"
	fromEnv.OAuthEncryptionKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	fromEnv.OAuthKeysURL = "https://env.example/keys"
	fromEnv.OAuthRedirectURIs = []string{"https://a.example/cb", "https://b.example/cb/*"}
	fromEnv.OAuthRedirectSchemes = []string{"myapp"}
	fromEnv.OAuthRegisterLimit = 0
	fromEnv.OAuthSignInLimit = 5
	fromEnv.OAuthClientTTL = 2 * time.Hour
	fromEnv.OAuthMaxClients = 50
	fromEnv.OAuthEnterpriseIdPs = map[string]string{"https://acme.okta.example": "ACME_API_KEY"}
	fromEnv.OAuthVerifyOperation = "status_get"
	fromEnv.ErrorCodes = map[string]string{"unauthorized": "-32001", "rate_limited": "-32029"}
	fromEnv.CredentialParameters = []string{"api_key"}
	fromEnv.PlansFile = "env-plans.yaml"
	fromEnv.ListByPlan = true
	fromEnv.EventMaxLen = 500
	fromEnv.Metrics = false
	fromEnv.IncludeTags = []string{"pets", "store"}
	fromEnv.ExcludeTags = []string{"admin"}
	fromEnv.IncludeOperations = []string{"list*", "get?et"}
	fromEnv.ExcludeOperations = []string{"*Internal*"}
	fromEnv.IncludeMethods = []string{"get", "POST"}
	fromEnv.ExcludeMethods = []string{"delete"}
	fromEnv.ToolNames = map[string]string{"listPets": "pets", "getPet": "pet"}
	fromEnv.ToolAnnotations = map[string]string{"searchPets": "readOnly idempotent"}
	fromEnv.BinaryLinkBytes, fromEnv.MaxDownloadBytes = 1048576, 33554432
	fromEnv.AsyncWait = 12 * time.Second
	fromEnv.AsyncPollInterval, fromEnv.Tasks, fromEnv.TaskTTL = 2*time.Second, TasksMemory, 30*time.Minute
	fromEnv.MaxTasksPerKey, fromEnv.MaxTasks = 5, 500
	fromEnv.IdPIssuer, fromEnv.IdPAudience, fromEnv.IdPAlgorithms = "https://login.example.com/realms/acme", "https://mcp.example.com/mcp", []string{"ES256"}
	fromEnv.IdPIdentityClaim, fromEnv.IdPPlanClaim, fromEnv.IdPUpstream = "client_id", "tier", "forward"
	fromEnv.IdPClientID, fromEnv.IdPClientSecret, fromEnv.IdPExchangeAudience = "restmcp", "s3cret", "https://api.example.com"
	fromEnv.ReportMaxTools = 40
	fromEnv.ReportMaxListBytes = -1

	fromFlags := fromEnv
	fromFlags.Spec = "flag-spec.json"
	fromFlags.Upstream = "https://flag.example/v2"
	fromFlags.Overlays = []string{"flag-a.yaml", "flag-b.yaml"}
	fromFlags.RefRoot = "flag-root"
	fromFlags.Lenient = true
	fromFlags.Addr = ":7003"
	fromFlags.MCPPath = "/flag-mcp"
	// redis_url has no flag: the environment's value stays.
	fromFlags.RateLimit = 3
	fromFlags.RateWindow = 3 * time.Second
	fromFlags.UpstreamTimeout = 3 * time.Second
	fromFlags.MeterTimeout = 7 * time.Second
	fromFlags.MaxBodyBytes = 3000
	fromFlags.MaxResponseBytes = 300
	fromFlags.AllowedOrigins = []string{"https://c.example", "http://localhost:3000"}
	fromFlags.MaxToolNameLength = 32
	fromFlags.RequireKey = false
	fromFlags.LogLevel = slog.LevelError
	fromFlags.LogFormat = LogFormatJSON
	fromFlags.ShutdownTimeout = 3 * time.Second

	withEnv := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range fullEnv {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}

	tests := []struct {
		name string
		args []string
		env  map[string]string
		want func() Config
	}{
		{
			name: "defaults",
			want: Default,
		},
		{
			name: "file over default",
			args: []string{"--config", file},
			want: func() Config { return fromFile },
		},
		{
			name: "file named by RESTMCP_CONFIG",
			env:  map[string]string{"RESTMCP_CONFIG": file},
			want: func() Config { return fromFile },
		},
		{
			name: "--config over RESTMCP_CONFIG",
			args: []string{"--config=" + other},
			env:  map[string]string{"RESTMCP_CONFIG": file},
			want: func() Config {
				c := Default()
				c.ConfigFile, c.Addr, c.RateLimit = other, "127.0.0.1:7009", 9
				return c
			},
		},
		{
			name: "env over file",
			args: []string{"--config", file},
			env:  fullEnv,
			want: func() Config { return fromEnv },
		},
		{
			name: "env over default",
			env:  fullEnv,
			want: func() Config {
				c := fromEnv
				c.ConfigFile = ""
				return c
			},
		},
		{
			name: "flag over env over file",
			args: append([]string{"--config", file}, fullFlags...),
			env:  fullEnv,
			want: func() Config { return fromFlags },
		},
		{
			name: "one setting from each layer",
			args: []string{"--config", file, "--addr", ":7003"},
			env:  map[string]string{"RESTMCP_RATE_LIMIT": "-1"},
			want: func() Config {
				c := fromFile
				c.Addr = ":7003" // flag
				c.RateLimit = -1 // env
				return c         // the rest from the file
			},
		},
		{
			name: "empty env var counts as unset",
			args: []string{"--config", file},
			env:  map[string]string{"RESTMCP_ADDR": "", "RESTMCP_RATE_LIMIT": "  "},
			want: func() Config { return fromFile },
		},
		{
			name: "flag set to empty overrides env",
			args: []string{"--upstream="},
			env:  map[string]string{"RESTMCP_UPSTREAM": "http://env.example:9001"},
			want: Default,
		},
		{
			name: "bool flag without value",
			args: []string{"--config", file, "--require-key"},
			env:  withEnv(map[string]string{"RESTMCP_REQUIRE_KEY": "false"}),
			want: func() Config {
				c := fromEnv
				c.RequireKey = true
				return c
			},
		},
		{
			name: "arguments after the flags",
			args: []string{"--addr", ":7003", "validate", "spec.yaml", "--addr", "ignored"},
			want: func() Config {
				c := Default()
				c.Addr = ":7003"
				c.Args = []string{"validate", "spec.yaml", "--addr", "ignored"}
				return c
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(tt.args, env(tt.env))
			if err != nil {
				t.Fatalf("Load(%q) error: %v", tt.args, err)
			}
			want := tt.want()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Load(%q, %v) mismatch (-want +got):\n%s", tt.args, tt.env, diff)
			}
		})
	}
}

func TestLoadNilGetenv(t *testing.T) {
	got, err := Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Addr != DefaultAddr {
		t.Errorf("Addr = %q, want %q", got.Addr, DefaultAddr)
	}
}

func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string // the whole error, with FILE standing for the path
	}{
		{
			name:    "unknown key",
			content: "addr: 127.0.0.1:9000\nrate_limt: 5\n",
			want:    `config file FILE: line 2: unknown key "rate_limt" (did you mean "rate_limit"?)`,
		},
		{
			name:    "env var name as key",
			content: "RESTMCP_LOG_LEVEL: debug\n",
			want:    `config file FILE: line 1: unknown key "RESTMCP_LOG_LEVEL" (did you mean "log_level"?)`,
		},
		{
			name:    "flag name as key",
			content: "max-body-bytes: 10\n",
			want:    `config file FILE: line 1: unknown key "max-body-bytes" (did you mean "max_body_bytes"?)`,
		},
		{
			name:    "every unknown key is reported",
			content: "listen: :80\nspec: x.yaml\nmetering:\n  redis: true\n",
			want: `config file FILE: line 1: unknown key "listen" (known keys: accept_requests_without_id, addr, allowed_origins, async_poll_interval, async_wait, binary_link_bytes, credential_parameters, default_security, error_codes, error_structured_content, event_max_len, exclude_methods, exclude_operations, exclude_tags, forward_headers, idle_timeout, idp_algorithms, idp_audience, idp_client_id, idp_client_secret, idp_exchange_audience, idp_identity_claim, idp_issuer, idp_plan_claim, idp_upstream, include_methods, include_operations, include_tags, jq_filter, jq_max_memory_bytes, legacy_sse_path, lenient, list_by_plan, llms_txt, log_format, log_level, markdown_page, max_body_bytes, max_concurrent_calls, max_concurrent_calls_per_host, max_connections, max_description_length, max_download_bytes, max_header_bytes, max_legacy_streams_per_address, max_response_bytes, max_sessions, max_sessions_per_address, max_streams_per_session, max_tasks, max_tasks_per_key, max_tool_name_length, mcp_path, meter_timeout, metrics, oauth, oauth_client_ttl, oauth_encryption_key, oauth_enterprise_idps, oauth_keys_url, oauth_max_clients, oauth_mcp_path, oauth_redirect_schemes, oauth_redirect_uris, oauth_register_limit, oauth_signin_limit, oauth_verify_operation, origin_refusal_text, output_schema_budget, output_schemas, output_schemas_max_list_bytes, overlay, plans_file, protocol_versions, public_global_plan, public_mode, public_url, rate_limit, rate_limited_message, rate_window, read_header_timeout, read_timeout, redis_mode, redis_url, ref_root, reload_interval, report_max_list_bytes, report_max_tools, require_key, resources, response_meta, schema_budget_bytes, serve_openapi, server_name, server_variables, server_version, session_idle_timeout, sessions, shutdown_timeout, spec, stream_accept_strict, strict_arguments, task_ttl, tasks, text_content, timing_meta, tool_annotations, tool_mode, tool_name_style, tool_names, trusted_proxies, unauthorized_message, unknown_method_not_found, unknown_tool_not_found, upstream, upstream_errors, upstream_hosts, upstream_timeout, watch)` + "\n" +
				`config file FILE: line 3: unknown key "metering" (known keys: accept_requests_without_id, addr, allowed_origins, async_poll_interval, async_wait, binary_link_bytes, credential_parameters, default_security, error_codes, error_structured_content, event_max_len, exclude_methods, exclude_operations, exclude_tags, forward_headers, idle_timeout, idp_algorithms, idp_audience, idp_client_id, idp_client_secret, idp_exchange_audience, idp_identity_claim, idp_issuer, idp_plan_claim, idp_upstream, include_methods, include_operations, include_tags, jq_filter, jq_max_memory_bytes, legacy_sse_path, lenient, list_by_plan, llms_txt, log_format, log_level, markdown_page, max_body_bytes, max_concurrent_calls, max_concurrent_calls_per_host, max_connections, max_description_length, max_download_bytes, max_header_bytes, max_legacy_streams_per_address, max_response_bytes, max_sessions, max_sessions_per_address, max_streams_per_session, max_tasks, max_tasks_per_key, max_tool_name_length, mcp_path, meter_timeout, metrics, oauth, oauth_client_ttl, oauth_encryption_key, oauth_enterprise_idps, oauth_keys_url, oauth_max_clients, oauth_mcp_path, oauth_redirect_schemes, oauth_redirect_uris, oauth_register_limit, oauth_signin_limit, oauth_verify_operation, origin_refusal_text, output_schema_budget, output_schemas, output_schemas_max_list_bytes, overlay, plans_file, protocol_versions, public_global_plan, public_mode, public_url, rate_limit, rate_limited_message, rate_window, read_header_timeout, read_timeout, redis_mode, redis_url, ref_root, reload_interval, report_max_list_bytes, report_max_tools, require_key, resources, response_meta, schema_budget_bytes, serve_openapi, server_name, server_variables, server_version, session_idle_timeout, sessions, shutdown_timeout, spec, stream_accept_strict, strict_arguments, task_ttl, tasks, text_content, timing_meta, tool_annotations, tool_mode, tool_name_style, tool_names, trusted_proxies, unauthorized_message, unknown_method_not_found, unknown_tool_not_found, upstream, upstream_errors, upstream_hosts, upstream_timeout, watch)`,
		},
		{
			name:    "duration without unit",
			content: "rate_window: 60\n",
			want:    "config file FILE: rate_window: line 1: cannot unmarshal !!int `60` into time.Duration",
		},
		{
			name:    "wrong types",
			content: "rate_limit: lots\nallowed_origins: https://a.example\n",
			want:    "config file FILE: rate_limit: line 1: cannot unmarshal !!str `lots` into int\nconfig file FILE: allowed_origins: line 2: cannot unmarshal !!str `https:/...` into []string",
		},
		{
			name:    "bad log level",
			content: "log_level: verbose\n",
			want:    `config file FILE: log_level: line 1: invalid log level "verbose" (use debug, info, warn or error)`,
		},
		{
			name:    "a key given twice",
			content: "rate_limit: 5\nspec: a.yaml\nrate_limit: 6\n",
			want:    "config file FILE: line 3: rate_limit is given twice (first on line 1); keep one",
		},
		{
			name:    "bad Redis mode",
			content: "redis_mode: replicated\n",
			want:    `config file FILE: redis_mode: line 1: invalid Redis mode "replicated" (use single, cluster or sentinel)`,
		},
		{
			name:    "a cluster on a unix socket",
			content: "redis_mode: cluster\nredis_url: unix:///run/redis.sock\n",
			want:    "redis_mode: cluster needs a redis:// or rediss:// URL listing its nodes, not a unix socket",
		},
		{
			name:    "not a mapping",
			content: "- addr\n- spec\n",
			want:    "config file FILE: line 1: the top level must be a mapping of settings (key: value)",
		},
		{
			name:    "two documents",
			content: "addr: :1\n---\naddr: :2\n",
			want:    "config file FILE: holds more than one YAML document (---); put every setting in one",
		},
		{
			name:    "syntax error",
			content: "addr: [\n",
			want:    "config file FILE: line 1: did not find expected node content",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "restmcp.yaml", tt.content)
			_, err := Load([]string{"--config", path}, nil)
			if err == nil {
				t.Fatalf("Load with file %q: no error, want %q", tt.content, tt.want)
			}
			want := strings.ReplaceAll(tt.want, "FILE", path)
			if got := err.Error(); got != want {
				t.Errorf("Load with file %q:\n got %q\nwant %q", tt.content, got, want)
			}
		})
	}
}

func TestLoadEmptyFile(t *testing.T) {
	path := writeFile(t, "empty.yaml", "# nothing set yet\n")
	got, err := Load(nil, env(map[string]string{"RESTMCP_CONFIG": path}))
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.ConfigFile = path
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.yaml")
	_, err := Load([]string{"--config", path}, nil)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want an error matching os.ErrNotExist", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file %s", err, path)
	}
}

func TestLoadValueErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{
			name: "every bad value from every layer, then validation",
			args: []string{"--rate-window", "5", "--require-key=maybe"},
			env: map[string]string{
				"RESTMCP_RATE_LIMIT": "abc",
				"RESTMCP_LOG_LEVEL":  "loud",
				"RESTMCP_ADDR":       "8080",
			},
			want: `RESTMCP_RATE_LIMIT: invalid integer "abc"` + "\n" +
				`RESTMCP_LOG_LEVEL: invalid log level "loud" (use debug, info, warn or error)` + "\n" +
				`--rate-window: invalid duration "5" (write a number with a unit, such as "30s" or "1m")` + "\n" +
				`--require-key: invalid boolean "maybe" (use true or false)` + "\n" +
				`addr: must be host:port (e.g. 127.0.0.1:8080 or 0.0.0.0:8080); got "8080"`,
		},
		{
			name: "unknown flag",
			args: []string{"--bogus"},
			want: "parsing flags: flag provided but not defined: -bogus (run with --help for the list)",
		},
		{
			name: "redis_url flag does not exist",
			args: []string{"--redis-url", "redis://:pw@h:6379"},
			want: "parsing flags: flag provided but not defined: -redis-url (run with --help for the list)",
		},
		{
			name: "flag without value",
			args: []string{"--addr"},
			want: "parsing flags: flag needs an argument: -addr (run with --help for the list)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(tt.args, env(tt.env))
			if err == nil {
				t.Fatalf("Load(%q, %v): no error, want %q", tt.args, tt.env, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Load(%q, %v) error:\n got %q\nwant %q", tt.args, tt.env, err.Error(), tt.want)
			}
			if diff := cmp.Diff(Config{}, got); diff != "" {
				t.Errorf("Config not zero on error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help", "-help"} {
		_, err := Load([]string{arg}, nil)
		if !errors.Is(err, flag.ErrHelp) {
			t.Errorf("Load(%q) = %v, want flag.ErrHelp", arg, err)
		}
	}
}

func TestSelectionSettings(t *testing.T) {
	file := writeFile(t, "restmcp.yaml", `include_tags: [pets, " "]
exclude_methods: []
tool_names:
  listPets: pets
  getPet: " pet "
report_max_tools: 10
`)
	got, err := Load([]string{"--config", file, "--tool-names", "a=x", "--tool-names", "b=y", "--include-methods", "get", "--include-methods", "post"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.ConfigFile = file
	want.IncludeTags = []string{"pets"}
	want.ToolNames = map[string]string{"a": "x", "b": "y"} // the flag replaces the file's map
	want.IncludeMethods = []string{"get", "post"}
	want.ReportMaxTools = 10
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}

	got, err = Load([]string{"--config", file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"listPets": "pets", "getPet": "pet"}, got.ToolNames); diff != "" {
		t.Errorf("tool_names from the file (-want +got):\n%s", diff)
	}

	for _, tt := range []struct{ value, want string }{
		{"listPets", `RESTMCP_TOOL_NAMES: invalid pair "listPets" (write key=value)`},
		{"=pets", `RESTMCP_TOOL_NAMES: invalid pair "=pets" (write key=value)`},
		{"a=x,a=y", `RESTMCP_TOOL_NAMES: "a" is given twice`},
	} {
		_, err := Load(nil, env(map[string]string{"RESTMCP_TOOL_NAMES": tt.value}))
		if err == nil || err.Error() != tt.want {
			t.Errorf("RESTMCP_TOOL_NAMES=%q: error %v, want %q", tt.value, err, tt.want)
		}
	}
}

// TestConfigFileSections: settings may sit in their group's section, flat,
// or both ways in one file, with the same result; a key in another
// group's section, an unknown key in a section and a key given both ways
// are errors naming the line.
func TestConfigFileSections(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	flat := write("flat.yaml", "spec: api.yaml\nupstream: https://api.example.com\nupstream_timeout: 7s\noauth: true\noauth_keys_url: https://example.com/keys\nlog_level: debug\nsessions: memory\n")
	nested := write("nested.yaml", `document_and_tools:
  spec: api.yaml
upstream:
  upstream: https://api.example.com
  upstream_timeout: 7s
oauth:
  oauth: true
  oauth_keys_url: https://example.com/keys
observability:
  log_level: debug
sessions_and_transports:
  sessions: memory
`)
	mixed := write("mixed.yaml", "spec: api.yaml\nupstream:\n  upstream: https://api.example.com\n  upstream_timeout: 7s\noauth: true\noauth_keys_url: https://example.com/keys\nobservability: {log_level: debug}\nsessions: memory\n")
	want, err := Load([]string{"--config", flat}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{nested, mixed} {
		got, err := Load([]string{"--config", path}, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		got.ConfigFile = want.ConfigFile
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s differs from the flat file (-flat +got):\n%s", filepath.Base(path), diff)
		}
	}
	for _, tc := range []struct{ content, want string }{
		{"upstream:\n  log_level: debug\n", "line 2: log_level belongs in section observability, not upstream"},
		{"oauth:\n  oauth_mcp_pth: /x\n", `line 2: unknown key "oauth_mcp_pth" in section oauth (did you mean "oauth_mcp_path"?)`},
		{"log_level: info\nobservability:\n  log_level: debug\n", "line 3: log_level is given twice (first on line 1); keep one"},
	} {
		path := write("bad.yaml", tc.content)
		_, err := Load([]string{"--config", path}, nil)
		if want := "config file " + path + ": " + tc.want; err == nil || err.Error() != want {
			t.Errorf("%q: %v\nwant %s", tc.content, err, want)
		}
	}
}
