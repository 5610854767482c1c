package config

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Setting describes one configuration setting: how to set it and what it
// means. [Settings] returns them all; --help and docs/settings.md are built
// from that list.
type Setting struct {
	// Key is the YAML key, e.g. "rate_limit". Empty for the config file
	// setting itself, which cannot appear inside a config file.
	Key string
	// Flag is the command-line flag name without dashes, e.g. "rate-limit".
	// Empty when the setting has no flag (redis_url: a password on the
	// command line is visible to every local user through ps).
	Flag string
	// Env is the environment variable, e.g. "RESTMCP_RATE_LIMIT". An
	// environment variable set to the empty string counts as unset.
	Env string
	// Type names the value syntax: string, url, int, duration (Go syntax:
	// "30s", "1m30s"), bool, list (YAML sequence; comma-separated in env and
	// flags), map (YAML mapping; comma-separated key=value pairs in env and
	// flags), or one of the choices ("debug|info|warn|error").
	Type string
	// Default is the default written as it would be in an env var or flag;
	// "" when the default is empty.
	Default string
	// Usage is one or two sentences on what the setting does.
	Usage string
}

// setting is a Setting plus the Config field it sets. The table of
// settings is the only list of them: the environment, the flags, the
// config file's keys, the defaults shown by --help and docs/settings.md all come
// from it, and every value is parsed by the type of its field (see
// parseValue and decodeNode).
type setting struct {
	Setting
	// field returns a pointer to the setting's field of c: *string,
	// *Secret, *int, *int64, *bool, *time.Duration, *slog.Level,
	// *LogFormat, *RedisMode, a mode (modes.go), *[]string or
	// *map[string]string. Nil for the
	// config file setting.
	field func(c *Config) any
}

// Settings lists every setting in documentation order, the config file
// first. Each Default is the field's value in [Default], formatted as an
// environment variable would give it.
func Settings() []Setting {
	t := table()
	def := Default()
	out := make([]Setting, len(t))
	for i, s := range t {
		out[i] = s.Setting
		if s.field != nil {
			out[i].Default = formatValue(s.field(&def))
		}
	}
	return out
}

// WriteUsage writes the flag reference for --help to w, group by group
// (SettingGroups): every flag with its environment variable, YAML key,
// default and meaning.
func WriteUsage(w io.Writer) error {
	var b strings.Builder
	b.WriteString("Settings (precedence: flag > environment > config file > default), by concern:\n")
	b.WriteString("(Several documents on one endpoint: --spec NAME=PATH and --upstream NAME=URL for each, or an apis: list in the\nconfig file; see docs/apis.md.)\n")
	for _, g := range SettingGroups() {
		fmt.Fprintf(&b, "\n%s: %s\n", strings.ToUpper(g.Name), g.About)
		for _, s := range g.Settings {
			b.WriteString("\n")
			if s.Flag != "" {
				fmt.Fprintf(&b, "  --%s %s\n", s.Flag, s.Type)
			} else {
				fmt.Fprintf(&b, "  (no flag) %s\n", s.Type)
			}
			fmt.Fprintf(&b, "        %s\n", s.Usage)
			src := "env " + s.Env
			if s.Key != "" {
				src += ", config file key " + s.Key
			}
			def := s.Default
			if def == "" {
				def = `""`
			}
			fmt.Fprintf(&b, "        (%s; default %s)\n", src, def)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the settings reference, docs/settings.md: a
// section per group (SettingGroups), each a Markdown table (environment
// variable, flag, config file key, default, meaning).
func WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# restmcp: settings\n\n")
	b.WriteString("Generated from the settings table (config/settings.go) by `go test ./config -run TestSettingsDocument -update-settings`;\n")
	b.WriteString("`restmcp help` prints the same, group by group. Precedence: flag > environment > config file > default. An\n")
	b.WriteString("environment variable set to the empty string counts as unset. A config file (`--config`, YAML) gives each setting by\n")
	b.WriteString("its key, at the top level or inside its group's section (a key in another group's section is an error):\n\n")
	b.WriteString("```yaml\nspec: openapi.yaml\nupstream:\n  upstream: https://api.example.com\n  upstream_timeout: 10s\noauth:\n  oauth: true\n  oauth_keys_url: https://example.com/keys\n```\n")
	b.WriteString("\nSeveral documents on one endpoint take an `apis:` list instead of `spec` (or `--spec NAME=PATH` flags); each entry\n")
	b.WriteString("gives `name`, `spec` and any of the per-document settings below: " + strings.Join(quoted(APIKeys[1:]), ", ") + " ([apis.md](apis.md)).\n")
	code := func(s string) string {
		if s == "" {
			return ""
		}
		return "`" + s + "`"
	}
	for _, g := range SettingGroups() {
		fmt.Fprintf(&b, "\n## %s\n\n%s In a config file: at the top level, or in the section `%s:`.\n\n", g.Name, g.About, g.Section())
		b.WriteString("| env var | flag | config file key | default | meaning |\n")
		b.WriteString("|---|---|---|---|---|\n")
		for _, s := range g.Settings {
			flagName := ""
			if s.Flag != "" {
				flagName = "--" + s.Flag
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n",
				code(s.Env), code(flagName), code(s.Key), code(s.Default),
				strings.ReplaceAll(s.Usage, "|", "\\|"))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// FlagConfig and EnvConfig name the config file setting: the flag (without
// dashes) and the environment variable that give the YAML file's path.
const (
	FlagConfig = "config"
	EnvConfig  = "RESTMCP_CONFIG"
)

func table() []setting {
	return []setting{
		{Setting: Setting{
			Flag: FlagConfig, Env: EnvConfig, Type: "path",
			Usage: "YAML file with any of the settings below, by their config file key. Unknown keys are an error.",
		}},
		{Setting: Setting{
			Key: "spec", Flag: "spec", Env: "RESTMCP_SPEC", Type: "path|url",
			Usage: "OpenAPI document to serve: a file path or an http(s) URL (Swagger 2.0, OpenAPI 3.0 or 3.1). Empty serves the bundled demo finance API.",
		}, field: func(c *Config) any { return &c.Spec }},
		{Setting: Setting{
			Key: "upstream", Flag: "upstream", Env: "RESTMCP_UPSTREAM", Type: "url",
			Usage: "Base URL of the REST API, overriding the document's servers. Scheme and host only keep the document's base path. Empty uses the document's servers.",
		}, field: func(c *Config) any { return &c.Upstream }},
		{Setting: Setting{
			Key: "overlay", Flag: "overlay", Env: "RESTMCP_OVERLAY", Type: "list",
			Usage: "OpenAPI Overlay 1.0 documents (files or http(s) URLs) applied in order to the spec before it is loaded, to patch a vendor's document without editing it. The flag may be repeated.",
		}, field: func(c *Config) any { return &c.Overlays }},
		{Setting: Setting{
			Key: "ref_root", Flag: "ref-root", Env: "RESTMCP_REF_ROOT", Type: "path",
			Usage: "Folder that the spec's external $refs must stay inside; it must contain the spec. Empty means the spec's own folder. Set it to the parent folder when shared files sit beside the spec's folder (spec/ and common/).",
		}, field: func(c *Config) any { return &c.RefRoot }},
		{Setting: Setting{
			Key: "lenient", Flag: "lenient", Env: "RESTMCP_LENIENT", Type: "bool",
			Usage: "When the spec does not load as published, skip its broken references, nodes and operations (one warning each, naming file and JSON pointer) and serve the rest. false refuses to start instead. restmcp validate is always strict.",
		}, field: func(c *Config) any { return &c.Lenient }},
		{Setting: Setting{
			Key: "addr", Flag: "addr", Env: "RESTMCP_ADDR", Type: "host:port",
			Usage: "Address to listen on. The default accepts local clients only; use 0.0.0.0:8080 to accept remote ones (the container image does).",
		}, field: func(c *Config) any { return &c.Addr }},
		{Setting: Setting{
			Key: "mcp_path", Flag: "mcp-path", Env: "RESTMCP_MCP_PATH", Type: "path",
			Usage: "URL path of the MCP Streamable HTTP endpoint; / puts it at the root (/health, /ready and the discovery routes stay theirs).",
		}, field: func(c *Config) any { return &c.MCPPath }},
		{Setting: Setting{
			Key: "redis_url", Env: "RESTMCP_REDIS_URL", Type: "url",
			Usage: "Redis for metering counters (redis://[:password@]host:6379/0, rediss://, unix://); shared by every replica. Empty keeps counters in memory (one replica; reset on restart). No flag: it may hold a password.",
		}, field: func(c *Config) any { return &c.RedisURL }},
		{Setting: Setting{
			Key: "redis_mode", Flag: "redis-mode", Env: "RESTMCP_REDIS_MODE", Type: "single|cluster|sentinel",
			Usage: "How redis_url is read: single (one server), cluster (a Redis Cluster: redis://host1:6379?addr=host2:6379&addr=host3:6379 lists seed nodes) or sentinel (redis://sentinel1:26379?master_name=mymaster&addr=sentinel2:26379).",
		}, field: func(c *Config) any { return &c.RedisMode }},
		{Setting: Setting{
			Key: "rate_limit", Flag: "rate-limit", Env: "RESTMCP_RATE_LIMIT", Type: "int",
			Usage: "tools/call requests allowed per API key per rate_window; -1 disables rate limiting.",
		}, field: func(c *Config) any { return &c.RateLimit }},
		{Setting: Setting{
			Key: "rate_window", Flag: "rate-window", Env: "RESTMCP_RATE_WINDOW", Type: "duration",
			Usage: "Length of the rate-limit window.",
		}, field: func(c *Config) any { return &c.RateWindow }},
		{Setting: Setting{
			Key: "upstream_timeout", Flag: "upstream-timeout", Env: "RESTMCP_UPSTREAM_TIMEOUT", Type: "duration",
			Usage: "Time limit for one upstream request, including reading its body.",
		}, field: func(c *Config) any { return &c.UpstreamTimeout }},
		{Setting: Setting{
			Key: "meter_timeout", Flag: "meter-timeout", Env: "RESTMCP_METER_TIMEOUT", Type: "duration",
			Usage: "Time limit for the key lookup and admission of one tools/call against the metering store (Redis); past it the call gets 503 with Retry-After. Metering in memory never waits and runs without it.",
		}, field: func(c *Config) any { return &c.MeterTimeout }},
		{Setting: Setting{
			Key: "max_body_bytes", Flag: "max-body-bytes", Env: "RESTMCP_MAX_BODY_BYTES", Type: "int",
			Usage: "Largest MCP request body in bytes; larger requests get 413.",
		}, field: func(c *Config) any { return &c.MaxBodyBytes }},
		{Setting: Setting{
			Key: "max_response_bytes", Flag: "max-response-bytes", Env: "RESTMCP_MAX_RESPONSE_BYTES", Type: "int",
			Usage: "Largest upstream text body put into a tool result, in bytes; longer bodies are truncated with a note.",
		}, field: func(c *Config) any { return &c.MaxResponseBytes }},
		{Setting: Setting{
			Key: "binary_link_bytes", Flag: "binary-link-bytes", Env: "RESTMCP_BINARY_LINK_BYTES", Type: "int",
			Usage: "A GET operation's binary answer (file, image, audio) larger than this many bytes is returned as a resource_link the client reads with resources/read (the same caller, within 10 minutes, metered as a call of the tool) instead of inline base64; resources is then advertised. 0: off: binary answers are inline up to 5 MiB, larger ones refused.",
		}, field: func(c *Config) any { return &c.BinaryLinkBytes }},
		{Setting: Setting{
			Key: "max_download_bytes", Flag: "max-download-bytes", Env: "RESTMCP_MAX_DOWNLOAD_BYTES", Type: "int",
			Usage: "Largest binary answer read through a link (binary_link_bytes), in bytes; a larger one is an error naming this bound.",
		}, field: func(c *Config) any { return &c.MaxDownloadBytes }},
		{Setting: Setting{
			Key: "async_wait", Flag: "async-wait", Env: "RESTMCP_ASYNC_WAIT", Type: "duration",
			Usage: "When the upstream answers 202 with where to watch the job (Operation-Location, Azure-AsyncOperation or Location, same host), how long the call polls it (every Retry-After, 1 to 10 s) for the job's end, within upstream_timeout; past it the call answers the 202 and where the job is. The request is never sent again. 0: the 202 is the answer.",
		}, field: func(c *Config) any { return &c.AsyncWait }},
		{Setting: Setting{
			Key: "async_poll_interval", Flag: "async-poll-interval", Env: "RESTMCP_ASYNC_POLL_INTERVAL", Type: "duration",
			Usage: "The shortest wait between two polls of a job's status (100ms to 1m), whatever its Retry-After says; the longest is 10 s within a call, 1 min for a task (the task's pollIntervalMs).",
		}, field: func(c *Config) any { return &c.AsyncPollInterval }},
		{Setting: Setting{
			Key: "tasks", Flag: "tasks", Env: "RESTMCP_TASKS", Type: "auto|memory|redis|off",
			Usage: "Where jobs that outlive their call are kept. A 2026-07-28 client that declares the io.modelcontextprotocol/tasks extension gets a task for a call answered 202 (tasks/get, tasks/cancel); any other client gets the call waited for (async_wait) and, for a job still running, a handle for the companion tool job_status (listed when an operation declares a 202). Tasks belong to the key that started them. auto: redis with redis_url (every replica answers for every task), memory without. off: neither.",
		}, field: func(c *Config) any { return &c.Tasks }},
		{Setting: Setting{
			Key: "task_ttl", Flag: "task-ttl", Env: "RESTMCP_TASK_TTL", Type: "duration",
			Usage: "How long a task (or job handle) is kept from its start (1m to 168h): its ttlMs. Afterwards tasks/get and job_status no longer know it.",
		}, field: func(c *Config) any { return &c.TaskTTL }},
		{Setting: Setting{
			Key: "max_tasks_per_key", Flag: "max-tasks-per-key", Env: "RESTMCP_MAX_TASKS_PER_KEY", Type: "int",
			Usage: "Most jobs one key can have watched at once (tasks not yet ended); past it a call is waited for and its answer says it got no handle.",
		}, field: func(c *Config) any { return &c.MaxTasksPerKey }},
		{Setting: Setting{
			Key: "max_tasks", Flag: "max-tasks", Env: "RESTMCP_MAX_TASKS", Type: "int",
			Usage: "Most jobs watched at once for all keys (per replica with memory tasks, in all with redis); past it a call is waited for and its answer says it got no handle.",
		}, field: func(c *Config) any { return &c.MaxTasks }},
		{Setting: Setting{
			Key: "allowed_origins", Flag: "allowed-origins", Env: "RESTMCP_ALLOWED_ORIGINS", Type: "list",
			Usage: "Browser origins (scheme://host[:port], or *) allowed to call the MCP endpoint; requests without Origin are always allowed. Empty allows an Origin only when it and the request's Host are both loopback (localhost, 127.0.0.0/8, ::1); others get 403.",
		}, field: func(c *Config) any { return &c.AllowedOrigins }},
		{Setting: Setting{
			Key: "max_tool_name_length", Flag: "max-tool-name-length", Env: "RESTMCP_MAX_TOOL_NAME_LENGTH", Type: "int",
			Usage: fmt.Sprintf("Longest tool name (%d to %d); longer operationIds are shortened with a hash suffix. Above 64 some clients reject tools.", MinToolNameLength, MaxToolNameLength),
		}, field: func(c *Config) any { return &c.MaxToolNameLength }},
		{Setting: Setting{
			Key: "include_tags", Flag: "include-tags", Env: "RESTMCP_INCLUDE_TAGS", Type: "list",
			Usage: "Serve only operations with at least one of these tags (case-insensitive). Empty serves every operation. Selections of every kind combine: an operation must pass each include list and match no exclude list.",
		}, field: func(c *Config) any { return &c.IncludeTags }},
		{Setting: Setting{
			Key: "exclude_tags", Flag: "exclude-tags", Env: "RESTMCP_EXCLUDE_TAGS", Type: "list",
			Usage: "Do not serve operations with any of these tags.",
		}, field: func(c *Config) any { return &c.ExcludeTags }},
		{Setting: Setting{
			Key: "include_operations", Flag: "include-operations", Env: "RESTMCP_INCLUDE_OPERATIONS", Type: "list",
			Usage: "Serve only operations whose operationId or generated tool name matches one of these globs (* any characters, ? one character; case-sensitive). Empty serves every operation. Excluded operations take no tool names.",
		}, field: func(c *Config) any { return &c.IncludeOperations }},
		{Setting: Setting{
			Key: "exclude_operations", Flag: "exclude-operations", Env: "RESTMCP_EXCLUDE_OPERATIONS", Type: "list",
			Usage: "Do not serve operations whose operationId or generated tool name matches any of these globs.",
		}, field: func(c *Config) any { return &c.ExcludeOperations }},
		{Setting: Setting{
			Key: "include_methods", Flag: "include-methods", Env: "RESTMCP_INCLUDE_METHODS", Type: "list",
			Usage: "Serve only operations with one of these HTTP methods (get, post, …). Empty serves every method.",
		}, field: func(c *Config) any { return &c.IncludeMethods }},
		{Setting: Setting{
			Key: "exclude_methods", Flag: "exclude-methods", Env: "RESTMCP_EXCLUDE_METHODS", Type: "list",
			Usage: "Do not serve operations with any of these HTTP methods, e.g. delete.",
		}, field: func(c *Config) any { return &c.ExcludeMethods }},
		{Setting: Setting{
			Key: "tool_names", Flag: "tool-names", Env: "RESTMCP_TOOL_NAMES", Type: "map",
			Usage: "Tool names by operationId (listPets=pets,getPet=pet), overriding generated names and the x-mcp-name extension. They are taken before generated names, which get _2 on a clash; two operations with the same name are an error.",
		}, field: func(c *Config) any { return &c.ToolNames }},
		{Setting: Setting{
			Key: "tool_annotations", Flag: "tool-annotations", Env: "RESTMCP_TOOL_ANNOTATIONS", Type: "map",
			Usage: "Tool annotations by operationId, over the method's defaults (GET/HEAD read-only, DELETE destructive and idempotent, PUT idempotent) and the document's x-mcp-annotations: each value is hints separated by spaces, true or with ! false (searchItems=readOnly idempotent,sendMail=!idempotent openWorld), and title=\"…\" in a config file.",
		}, field: func(c *Config) any { return &c.ToolAnnotations }},
		{Setting: Setting{
			Key: "server_variables", Flag: "server-variables", Env: "RESTMCP_SERVER_VARIABLES", Type: "map",
			Usage: "Values for the document's server URL variables (region=eu,version=v2); unset ones take their default, and a value outside a variable's enum fails startup with the allowed values.",
		}, field: func(c *Config) any { return &c.ServerVariables }},
		{Setting: Setting{
			Key: "error_codes", Flag: "error-codes", Env: "RESTMCP_ERROR_CODES", Type: "map",
			Usage: "JSON-RPC codes of restmcp's own refusals, for clients that expect others: unauthorized (401), rate_limited (429), unavailable (503), e.g. unauthorized=-32001,rate_limited=-32029,unavailable=-32030. Defaults: -31401, -31429, -31503.",
		}, field: func(c *Config) any { return &c.ErrorCodes }},
		{Setting: Setting{
			Key: "public_url", Flag: "public-url", Env: "RESTMCP_PUBLIC_URL", Type: "url",
			Usage: "The MCP endpoint as clients reach it (https://mcp.example.com/mcp), for the client configurations the banner and restmcp clients print. Empty: the listen address.",
		}, field: func(c *Config) any { return &c.PublicURL }},
		{Setting: Setting{
			Key: "legacy_sse_path", Flag: "legacy-sse-path", Env: "RESTMCP_LEGACY_SSE_PATH", Type: "path",
			Usage: "Also serve the legacy HTTP+SSE transport (MCP 2024-11-05) at this path, e.g. /sse: GET opens the stream (the caller's key read from it), POST ?sessionid=… delivers messages; calls are admitted and metered as on mcp_path. A session lives in one process: behind several replicas, route a client to one (sticky sessions). Empty: none.",
		}, field: func(c *Config) any { return &c.LegacySSEPath }},
		{Setting: Setting{
			Key: "resources", Flag: "resources", Env: "RESTMCP_RESOURCES", Type: "map",
			Usage: "MCP resources served from GET operations that need no arguments, as URI=tool (bankscope://v1/metrics=get_metrics): resources/list lists them and resources/read calls the tool, admitted and metered as that call; capabilities.resources is advertised only then.",
		}, field: func(c *Config) any { return &c.Resources }},
		{Setting: Setting{
			Key: "error_structured_content", Flag: "error-structured-content", Env: "RESTMCP_ERROR_STRUCTURED_CONTENT", Type: "bool",
			Usage: "Keep an upstream error body that is a JSON object (code, retryable, request_id, …) as the error result's structuredContent, beside the text, redacted like it.",
		}, field: func(c *Config) any { return &c.ErrorStructuredContent }},
		{Setting: Setting{
			Key: "upstream_errors", Flag: "upstream-errors", Env: "RESTMCP_UPSTREAM_ERRORS", Type: "error|empty_array",
			Usage: "error: an upstream error is an error result naming the status. empty_array: it is the result [] (for tools documented to return an empty list when the API fails), except 401, 403 and 429, which stay errors.",
		}, field: func(c *Config) any { return &c.UpstreamErrors }},
		{Setting: Setting{
			Key: "protocol_versions", Flag: "protocol-versions", Env: "RESTMCP_PROTOCOL_VERSIONS", Type: "list",
			Usage: "The MCP revisions offered, e.g. 2024-11-05,2025-03-26,2025-06-18: initialize negotiates among them (a client asking for another gets the newest listed) and a request naming another in MCP-Protocol-Version is refused. Empty: every revision restmcp speaks (2024-11-05 to 2026-07-28).",
		}, field: func(c *Config) any { return &c.ProtocolVersions }},
		{Setting: Setting{
			Key: "max_concurrent_calls", Flag: "max-concurrent-calls", Env: "RESTMCP_MAX_CONCURRENT_CALLS", Type: "int",
			Usage: "Most tools/call requests in progress at once; one more is answered 429 with Retry-After: 1, unmetered and not sent. 0: no cap.",
		}, field: func(c *Config) any { return &c.MaxConcurrentCalls }},
		{Setting: Setting{
			Key: "max_concurrent_calls_per_host", Flag: "max-concurrent-calls-per-host", Env: "RESTMCP_MAX_CONCURRENT_CALLS_PER_HOST", Type: "int",
			Usage: "Most tools/call requests in progress at once to one upstream host; past it, 429 with Retry-After: 1. 0: no cap.",
		}, field: func(c *Config) any { return &c.MaxConcurrentCallsPerHost }},
		{Setting: Setting{
			Key: "text_content", Flag: "text-content", Env: "RESTMCP_TEXT_CONTENT", Type: "full|receipt",
			Usage: "full: a result's text content is the upstream body. receipt: a JSON object body travels once, in structuredContent, and the text is a one-line receipt (status, size, members); errors and other bodies keep their text.",
		}, field: func(c *Config) any { return &c.TextContent }},
		{Setting: Setting{
			Key: "strict_arguments", Flag: "strict-arguments", Env: "RESTMCP_STRICT_ARGUMENTS", Type: "bool",
			Usage: "List every tool's input schema closed at its root (additionalProperties: false in tools/list), so clients and models see that no other argument is taken. A call with an argument the operation does not take is refused, naming it, either way (docs/requests.md, R7).",
		}, field: func(c *Config) any { return &c.StrictArguments }},
		{Setting: Setting{
			Key: "tool_name_style", Flag: "tool-name-style", Env: "RESTMCP_TOOL_NAME_STYLE", Type: "snake|kebab|as_is",
			Usage: "How operationIds become tool names: snake (etfs.topHoldings → etfs_top_holdings), kebab (getAccounts → get-accounts) or as_is (get-accounts stays; characters outside A-Z a-z 0-9 _ - become _). tool_names and x-mcp-name still name single tools.",
		}, field: func(c *Config) any { return &c.ToolNameStyle }},
		{Setting: Setting{
			Key: "forward_headers", Flag: "forward-headers", Env: "RESTMCP_FORWARD_HEADERS", Type: "list",
			Usage: "Caller request headers sent upstream unchanged on every call (X-Integration-Id, X-Culture): nothing else the caller sends is forwarded. Hop-by-hop, credential (Authorization, Cookie, X-Api-Key), MCP and proxy headers cannot be listed; a header the operation sets keeps its value.",
		}, field: func(c *Config) any { return &c.ForwardHeaders }},
		{Setting: Setting{
			Key: "unauthorized_message", Flag: "unauthorized-message", Env: "RESTMCP_UNAUTHORIZED_MESSAGE", Type: "string",
			Usage: "Text of every 401 for an API key (missing, unknown, revoked), e.g. \"Unauthorized. Register at https://example.com to obtain an API token.\" Empty: restmcp's, which says what went wrong.",
		}, field: func(c *Config) any { return &c.UnauthorizedMessage }},
		{Setting: Setting{
			Key: "rate_limited_message", Flag: "rate-limited-message", Env: "RESTMCP_RATE_LIMITED_MESSAGE", Type: "string",
			Usage: "Text of every 429 (rate limit or quota); Retry-After is still set. Empty: restmcp's, which names the limit and the plan.",
		}, field: func(c *Config) any { return &c.RateLimitedMessage }},
		{Setting: Setting{
			Key: "unknown_tool_not_found", Flag: "unknown-tool-not-found", Env: "RESTMCP_UNKNOWN_TOOL_NOT_FOUND", Type: "bool",
			Usage: "Answer a tools/call of a name that is not a tool (a retired one, say) with HTTP 404 and JSON-RPC -32601 \"Unknown tool: <name>\", carrying the caller's rate-limit headers as every tools/call answer does (read from its usage, nothing counted). false: 200 with -32602, as the MCP SDK does.",
		}, field: func(c *Config) any { return &c.UnknownToolNotFound }},
		{Setting: Setting{
			Key: "jq_filter", Flag: "jq-filter", Env: "RESTMCP_JQ_FILTER", Type: "bool",
			Usage: "Give every tool whose 2xx answer is JSON an optional string argument jq_filter: the upstream is called as usual and the answer is the filter's output (jq, each filter in a process of its own: 2 s of CPU and of time, at most jq_max_memory_bytes of memory, no environment or input functions, at most max_response_bytes of output, on an answer of at most 16 MiB), so a model gets the fields it needs rather than the whole body.",
		}, field: func(c *Config) any { return &c.JQFilter }},
		{Setting: Setting{
			Key: "jq_max_memory_bytes", Flag: "jq-max-memory-bytes", Env: "RESTMCP_JQ_MAX_MEMORY_BYTES", Type: "int",
			Usage: "The most memory, in bytes, one jq filter may use (each filter runs in a process of its own: RLIMIT_DATA, and on Linux its resident memory, read every 2 ms); a filter that needs more is stopped and its call answered with an error naming this bound. At least 67108864 (64 MiB).",
		}, field: func(c *Config) any { return &c.JQMaxMemoryBytes }},
		{Setting: Setting{
			Key: "unknown_method_not_found", Flag: "unknown-method-not-found", Env: "RESTMCP_UNKNOWN_METHOD_NOT_FOUND", Type: "bool",
			Usage: "Answer a request for a method restmcp does not serve (resources/list without resources, prompts/list, …) with HTTP 404 and JSON-RPC -32601 on every wire. false: 404 on the 2026-07-28 wire, 200 before it, as the MCP SDK does.",
		}, field: func(c *Config) any { return &c.UnknownMethodNotFound }},
		{Setting: Setting{
			Key: "accept_requests_without_id", Flag: "accept-requests-without-id", Env: "RESTMCP_ACCEPT_REQUESTS_WITHOUT_ID", Type: "bool",
			Usage: "Answer a JSON-RPC request without an id (a method other than notifications/…, a tools/call included) as a notification: HTTP 202 with an empty body, nothing run or metered, as some services document it. false: a tools/call without an id is 400 -32600, other methods as the MCP SDK answers them.",
		}, field: func(c *Config) any { return &c.AcceptRequestsWithoutID }},
		{Setting: Setting{
			Key: "stream_accept_strict", Flag: "stream-accept-strict", Env: "RESTMCP_STREAM_ACCEPT_STRICT", Type: "bool",
			Usage: "In sessions mode, open a session's GET stream only when Accept names text/event-stream, as MCP clients must send it; a GET without it (no Accept, */*) is 405 with Allow. false: a missing Accept or */* opens the stream too.",
		}, field: func(c *Config) any { return &c.StreamAcceptStrict }},
		{Setting: Setting{
			Key: "origin_refusal_text", Flag: "origin-refusal-text", Env: "RESTMCP_ORIGIN_REFUSAL_TEXT", Type: "bool",
			Usage: "Answer a request from a foreign Origin with 403 and a text/plain body (\"Forbidden: origin not allowed\"). false: a JSON body {\"error\": …}.",
		}, field: func(c *Config) any { return &c.OriginRefusalText }},
		{Setting: Setting{
			Key: "response_meta", Flag: "response-meta", Env: "RESTMCP_RESPONSE_META", Type: "bool",
			Usage: "Add a top-level \"meta\" member to every JSON-RPC answer of the MCP endpoint (tools/call, success or error, and initialize, tools/list, ping, …): {\"time\": whole milliseconds spent, \"parameters\": the call's arguments, {} for other methods}, for clients that expect that vendor envelope. The Go MCP SDK ignores the member; the TypeScript SDK refuses such a response (Unrecognized key \"meta\"), so turn it on only for clients that expect it.",
		}, field: func(c *Config) any { return &c.ResponseMeta }},
		{Setting: Setting{
			Key: "markdown_page", Flag: "markdown-page", Env: "RESTMCP_MARKDOWN_PAGE", Type: "path",
			Usage: "Serve a Markdown page of the MCP endpoint for agents at this path (\"/docs/v2_mcp.md\"): the URL, how to authenticate, each tool with its description and arguments. Empty: none.",
		}, field: func(c *Config) any { return &c.MarkdownPage }},
		{Setting: Setting{
			Key: "server_name", Flag: "server-name", Env: "RESTMCP_SERVER_NAME", Type: "string",
			Usage: "The server's name in initialize (serverInfo.name), the server card and llms.txt. Empty: restmcp.",
		}, field: func(c *Config) any { return &c.ServerName }},
		{Setting: Setting{
			Key: "server_version", Flag: "server-version", Env: "RESTMCP_SERVER_VERSION", Type: "string",
			Usage: "The server's version in initialize (serverInfo.version) and the server card. Empty: restmcp's own.",
		}, field: func(c *Config) any { return &c.ServerVersion }},
		{Setting: Setting{
			Key: "timing_meta", Flag: "timing-meta", Env: "RESTMCP_TIMING_META", Type: "bool",
			Usage: "Add the call's timing to each tools/call result as _meta \"io.restmcp/timing\" (meter_ms, upstream_ms, total_ms). Every tools/call response has a Server-Timing header either way.",
		}, field: func(c *Config) any { return &c.TimingMeta }},
		{Setting: Setting{
			Key: "llms_txt", Flag: "llms-txt", Env: "RESTMCP_LLMS_TXT", Type: "bool",
			Usage: "Serve GET /llms.txt: the MCP endpoint, how to authenticate and every tool with its one-line description, in Markdown.",
		}, field: func(c *Config) any { return &c.LLMsTxt }},
		{Setting: Setting{
			Key: "serve_openapi", Flag: "serve-openapi", Env: "RESTMCP_SERVE_OPENAPI", Type: "bool",
			Usage: "Serve the OpenAPI document restmcp serves from, as JSON, at GET /openapi.json.",
		}, field: func(c *Config) any { return &c.ServeOpenAPI }},
		{Setting: Setting{
			Key: "sessions", Flag: "sessions", Env: "RESTMCP_SESSIONS", Type: "off|memory|redis",
			Usage: "off: stateless. memory or redis: initialize issues an Mcp-Session-Id that every later request must carry (missing: 400, unknown or expired: 404), GET with Accept: text/event-stream opens the session's stream (keep-alives, and notifications/tools/list_changed when the document is reloaded), DELETE ends it. redis shares sessions across replicas.",
		}, field: func(c *Config) any { return &c.Sessions }},
		{Setting: Setting{
			Key: "session_idle_timeout", Flag: "session-idle-timeout", Env: "RESTMCP_SESSION_IDLE_TIMEOUT", Type: "duration",
			Usage: "A session not used for this long ends (each request extends it).",
		}, field: func(c *Config) any { return &c.SessionIdleTimeout }},
		{Setting: Setting{
			Key: "max_sessions", Flag: "max-sessions", Env: "RESTMCP_MAX_SESSIONS", Type: "int",
			Usage: "Sessions mode: most live sessions one replica keeps; one more initialize is answered 503 with Retry-After. 0: no cap.",
		}, field: func(c *Config) any { return &c.MaxSessions }},
		{Setting: Setting{
			Key: "max_sessions_per_address", Flag: "max-sessions-per-address", Env: "RESTMCP_MAX_SESSIONS_PER_ADDRESS", Type: "int",
			Usage: "Sessions mode: most live sessions one client address (an IPv6 address by its /64) holds on a replica; one more initialize is answered 429. 0: no cap.",
		}, field: func(c *Config) any { return &c.MaxSessionsPerAddress }},
		{Setting: Setting{
			Key: "max_streams_per_session", Flag: "max-streams-per-session", Env: "RESTMCP_MAX_STREAMS_PER_SESSION", Type: "int",
			Usage: "Sessions mode: most GET streams open at once on one session; one more is answered 429. 0: no cap.",
		}, field: func(c *Config) any { return &c.MaxStreamsPerSession }},
		{Setting: Setting{
			Key: "max_legacy_streams_per_address", Flag: "max-legacy-streams-per-address", Env: "RESTMCP_MAX_LEGACY_STREAMS_PER_ADDRESS", Type: "int",
			Usage: "With legacy_sse_path: most legacy SSE streams open at once from one client address; one more is answered 429. 0: no cap.",
		}, field: func(c *Config) any { return &c.MaxLegacyStreamsPerAddress }},
		{Setting: Setting{
			Key: "watch", Flag: "watch", Env: "RESTMCP_WATCH", Type: "bool",
			Usage: "Reload the spec file when it changes (checked every reload_interval, default 2s): the tools are swapped at once, calls in flight finish on the old ones, and a document that fails to load keeps the current tools (the log says why). SIGHUP reloads at any time.",
		}, field: func(c *Config) any { return &c.Watch }},
		{Setting: Setting{
			Key: "reload_interval", Flag: "reload-interval", Env: "RESTMCP_RELOAD_INTERVAL", Type: "duration",
			Usage: "How often watch checks the spec file, or how often a spec URL is fetched again (If-None-Match / If-Modified-Since, reloaded when it changed). 0: 2s with watch; a URL is not reloaded.",
		}, field: func(c *Config) any { return &c.ReloadInterval }},
		{Setting: Setting{
			Key: "tool_mode", Flag: "tool-mode", Env: "RESTMCP_TOOL_MODE", Type: "full|compact",
			Usage: "full: one tool per operation. compact: three tools for APIs too large to list (search_operations ranks the operations for a task, describe_operation gives one's schema, call_operation calls it with the same plan gate, metering and request building as a direct call).",
		}, field: func(c *Config) any { return &c.ToolMode }},
		{Setting: Setting{
			Key: "oauth", Flag: "oauth", Env: "RESTMCP_OAUTH", Type: "bool",
			Usage: "Serve the OAuth front for Claude and ChatGPT connectors, which cannot send API keys: a sign-in page that takes the user's API key, and a second MCP endpoint at oauth_mcp_path whose access tokens stand for that key. Needs an https public_url (http on loopback only).",
		}, field: func(c *Config) any { return &c.OAuth }},
		{Setting: Setting{
			Key: "oauth_mcp_path", Flag: "oauth-mcp-path", Env: "RESTMCP_OAUTH_MCP_PATH", Type: "path",
			Usage: "URL path of the OAuth MCP endpoint: the URL to paste into Claude or ChatGPT is public_url's origin followed by it.",
		}, field: func(c *Config) any { return &c.OAuthMCPPath }},
		{Setting: Setting{
			Key: "oauth_encryption_key", Env: "RESTMCP_OAUTH_ENCRYPTION_KEY", Type: "base64",
			Usage: "32 bytes (openssl rand -base64 32) that seal the API keys behind access tokens in Redis and sign the sign-in form; the same on every replica. Required with redis_url; without Redis, empty makes a random key per process (tokens end at restart). No flag: it is a secret.",
		}, field: func(c *Config) any { return &c.OAuthEncryptionKey }},
		{Setting: Setting{
			Key: "idp_issuer", Flag: "idp-issuer", Env: "RESTMCP_IDP_ISSUER", Type: "url",
			Usage: "The vendor's OpenID provider (its issuer URL): its access tokens are accepted as Authorization: Bearer on the MCP endpoint beside API keys (resource-server mode). Discovery, JWKS (refetched on an unknown key id at most every 5 s), iss, aud, exp and nbf (60 s skew) are checked; /.well-known/oauth-protected-resource names the provider, so connectors sign in there. Empty: off.",
		}, field: func(c *Config) any { return &c.IdPIssuer }},
		{Setting: Setting{
			Key: "idp_audience", Flag: "idp-audience", Env: "RESTMCP_IDP_AUDIENCE", Type: "url",
			Usage: "The aud a token must carry (RFC 8707 resource). Empty: the MCP URL (public_url + mcp_path, or the listen address's).",
		}, field: func(c *Config) any { return &c.IdPAudience }},
		{Setting: Setting{
			Key: "idp_algorithms", Flag: "idp-algorithms", Env: "RESTMCP_IDP_ALGORITHMS", Type: "list",
			Usage: "The JWS algorithms accepted on the provider's tokens (asymmetric only; none and HS* are refused).",
		}, field: func(c *Config) any { return &c.IdPAlgorithms }},
		{Setting: Setting{
			Key: "idp_identity_claim", Flag: "idp-identity-claim", Env: "RESTMCP_IDP_IDENTITY_CLAIM", Type: "string",
			Usage: "The claim that identifies the caller for metering (sub, client_id, email, an organisation id): key id idp-<hash of its value>.",
		}, field: func(c *Config) any { return &c.IdPIdentityClaim }},
		{Setting: Setting{
			Key: "idp_plan_claim", Flag: "idp-plan-claim", Env: "RESTMCP_IDP_PLAN_CLAIM", Type: "string",
			Usage: "The claim whose value names the caller's plan in the plans file (a plan it does not define: 403). Empty, or a token without it: the default plan.",
		}, field: func(c *Config) any { return &c.IdPPlanClaim }},
		{Setting: Setting{
			Key: "idp_upstream", Flag: "idp-upstream", Env: "RESTMCP_IDP_UPSTREAM", Type: "exchange|forward|key",
			Usage: "What the upstream API gets for a provider's caller: exchange, a token the provider issues for idp_exchange_audience by RFC 8693 token exchange (cached until 30 s before it expires); forward, the inbound token itself (only for an upstream that accepts the same audience); key, the API key bound to the caller's identity in the key registry (restmcp keys create --identity VALUE; kept sealed with oauth_encryption_key; the caller is metered on that key's plan; an identity without one is refused 403).",
		}, field: func(c *Config) any { return &c.IdPUpstream }},
		{Setting: Setting{
			Key: "idp_client_id", Flag: "idp-client-id", Env: "RESTMCP_IDP_CLIENT_ID", Type: "string",
			Usage: "restmcp's client id at the provider, for the token exchange (HTTP Basic).",
		}, field: func(c *Config) any { return &c.IdPClientID }},
		{Setting: Setting{
			Key: "idp_client_secret", Flag: "idp-client-secret", Env: "RESTMCP_IDP_CLIENT_SECRET", Type: "string",
			Usage: "restmcp's client secret at the provider, for the token exchange. Prefer the environment variable.",
		}, field: func(c *Config) any { return &c.IdPClientSecret }},
		{Setting: Setting{
			Key: "idp_exchange_audience", Flag: "idp-exchange-audience", Env: "RESTMCP_IDP_EXCHANGE_AUDIENCE", Type: "string",
			Usage: "The audience asked for in the token exchange: the upstream API's identifier at the provider.",
		}, field: func(c *Config) any { return &c.IdPExchangeAudience }},
		{Setting: Setting{
			Key: "oauth_keys_url", Flag: "oauth-keys-url", Env: "RESTMCP_OAUTH_KEYS_URL", Type: "url",
			Usage: "Where users get an API key, linked from the sign-in page. Empty: no link.",
		}, field: func(c *Config) any { return &c.OAuthKeysURL }},
		{Setting: Setting{
			Key: "oauth_redirect_uris", Flag: "oauth-redirect-uris", Env: "RESTMCP_OAUTH_REDIRECT_URIS", Type: "list",
			Usage: "https redirect URIs OAuth clients may register: exact URIs, and https://host/path/* for that host and path followed by one path segment (never a bare host). Loopback http URIs (any port) and private-use schemes are always allowed; of several URIs in a registration the acceptable ones are kept.",
		}, field: func(c *Config) any { return &c.OAuthRedirectURIs }},
		{Setting: Setting{
			Key: "oauth_redirect_schemes", Flag: "oauth-redirect-schemes", Env: "RESTMCP_OAUTH_REDIRECT_SCHEMES", Type: "list",
			Usage: "Private-use URI schemes without a dot that native apps may register redirect URIs with (RFC 8252 §7.1), e.g. cursor://anysphere.cursor-mcp/oauth/callback. A scheme with a dot (com.example.app:/cb) always may; javascript, data, file, blob, about and vbscript never.",
		}, field: func(c *Config) any { return &c.OAuthRedirectSchemes }},
		{Setting: Setting{
			Key: "oauth_register_limit", Flag: "oauth-register-limit", Env: "RESTMCP_OAUTH_REGISTER_LIMIT", Type: "int",
			Usage: "Client registrations (and client metadata document fetches) per client address per minute, an IPv6 address counted by its /64; then 429 with Retry-After. Hosted connectors register from a few shared addresses on each reconnect. 0: no limit. The token endpoint is never limited per address.",
		}, field: func(c *Config) any { return &c.OAuthRegisterLimit }},
		{Setting: Setting{
			Key: "oauth_signin_limit", Flag: "oauth-signin-limit", Env: "RESTMCP_OAUTH_SIGNIN_LIMIT", Type: "int",
			Usage: "Sign-in attempts (API keys typed on the sign-in page) per client address per minute, an IPv6 address counted by its /64: the guard against guessing keys. 0: no limit.",
		}, field: func(c *Config) any { return &c.OAuthSignInLimit }},
		{Setting: Setting{
			Key: "oauth_client_ttl", Flag: "oauth-client-ttl", Env: "RESTMCP_OAUTH_CLIENT_TTL", Type: "duration",
			Usage: "How long a registered OAuth client is kept unused; each token issued or refreshed for it keeps it as long as its refresh token (30 days).",
		}, field: func(c *Config) any { return &c.OAuthClientTTL }},
		{Setting: Setting{
			Key: "oauth_max_clients", Flag: "oauth-max-clients", Env: "RESTMCP_OAUTH_MAX_CLIENTS", Type: "int",
			Usage: "Registered OAuth clients kept at most (identical registrations are one client); past it, the longest unused are dropped. A client keeps at most 2 KiB of metadata (a typical one about 400 bytes of memory).",
		}, field: func(c *Config) any { return &c.OAuthMaxClients }},
		{Setting: Setting{
			Key: "oauth_enterprise_idps", Flag: "oauth-enterprise-idps", Env: "RESTMCP_OAUTH_ENTERPRISE_IDPS", Type: "map",
			Usage: "Enterprise-Managed Authorization: enterprise identity providers (issuer URL) whose identity assertions (ID-JAG, typ oauth-id-jag+jwt) the token endpoint takes as JWT bearer grants, each with the name of the environment variable that holds the API key its users' calls carry upstream (https://acme.okta.com=ACME_API_KEY). The user is metered as ema-<hash of issuer and subject> under that key's plan; no sign-in page, no refresh token. Needs oauth.",
		}, field: func(c *Config) any { return &c.OAuthEnterpriseIdPs }},
		{Setting: Setting{
			Key: "oauth_verify_operation", Flag: "oauth-verify-operation", Env: "RESTMCP_OAUTH_VERIFY_OPERATION", Type: "string",
			Usage: "Tool (by name) whose upstream call, made without arguments, checks a key at sign-in when key_mode is open: 2xx accepts it, 401 or 403 refuses it. Empty: in open mode the sign-in accepts any key and the upstream API judges it on each call. In registry mode the registry checks keys.",
		}, field: func(c *Config) any { return &c.OAuthVerifyOperation }},
		{Setting: Setting{
			Key: "default_security", Flag: "default-security", Env: "RESTMCP_DEFAULT_SECURITY", Type: "string",
			Usage: "Where the caller's key goes for a document that declares no security: header:<Name>, header:Authorization:Bearer, query:<name>, cookie:<name>, bearer or basic. Empty: such operations get no credential.",
		}, field: func(c *Config) any { return &c.DefaultSecurity }},
		{Setting: Setting{
			Key: "credential_parameters", Flag: "credential-parameters", Env: "RESTMCP_CREDENTIAL_PARAMETERS", Type: "list",
			Usage: "Document parameters (query, header or cookie) that carry the API key: left out of the tool schema and filled from the caller's key.",
		}, field: func(c *Config) any { return &c.CredentialParameters }},
		{Setting: Setting{
			Key: "report_max_tools", Flag: "report-max-tools", Env: "RESTMCP_REPORT_MAX_TOOLS", Type: "int",
			Usage: "Log the startup tool report as a warning when there are more tools than this; -1 never warns.",
		}, field: func(c *Config) any { return &c.ReportMaxTools }},
		{Setting: Setting{
			Key: "report_max_list_bytes", Flag: "report-max-list-bytes", Env: "RESTMCP_REPORT_MAX_LIST_BYTES", Type: "int",
			Usage: "Log the startup tool report as a warning when tools/list is larger than this many bytes (about 4 bytes per model token); -1 never warns.",
		}, field: func(c *Config) any { return &c.ReportMaxListBytes }},
		{Setting: Setting{
			Key: "output_schemas", Flag: "output-schemas", Env: "RESTMCP_OUTPUT_SCHEMAS", Type: "bool",
			Usage: "List each tool's outputSchema. It describes the 2xx response and never constrains it: no required, enum, pattern, format or bounds, every value below the root may be null, and structuredContent is made to fit it. false: no outputSchema; structuredContent is still sent.",
		}, field: func(c *Config) any { return &c.OutputSchemas }},
		{Setting: Setting{
			Key: "schema_budget_bytes", Flag: "schema-budget-bytes", Env: "RESTMCP_SCHEMA_BUDGET_BYTES", Type: "int",
			Usage: "Largest input schema of one tool in bytes: past it, the deepest nested objects become placeholders, level by level, then long descriptions and enums are shortened. -1: no cap.",
		}, field: func(c *Config) any { return &c.SchemaBudget }},
		{Setting: Setting{
			Key: "output_schemas_max_list_bytes", Flag: "output-schemas-max-list-bytes", Env: "RESTMCP_OUTPUT_SCHEMAS_MAX_LIST_BYTES", Type: "int",
			Usage: "When tools/list with output schemas would be larger than this (bytes; clients pay for the list in tokens on every turn), every outputSchema is left out and the log says so; input schemas are never cut for it, and structuredContent is still sent. -1: keep them whatever the size.",
		}, field: func(c *Config) any { return &c.OutputSchemasMaxListBytes }},
		{Setting: Setting{
			Key: "output_schema_budget", Flag: "output-schema-budget", Env: "RESTMCP_OUTPUT_SCHEMA_BUDGET", Type: "int",
			Usage: "Largest output schema in bytes; deeper structure is cut (the text content always has the whole response). -1: no cap.",
		}, field: func(c *Config) any { return &c.OutputSchemaBudget }},
		{Setting: Setting{
			Key: "max_description_length", Flag: "max-description-length", Env: "RESTMCP_MAX_DESCRIPTION_LENGTH", Type: "int",
			Usage: "Longest tool description in characters; a longer one is cut at a word boundary and ends with \" …\" (OpenAI-API hosts refuse longer ones). -1: no cap.",
		}, field: func(c *Config) any { return &c.MaxDescriptionLength }},
		{Setting: Setting{
			Key: "require_key", Flag: "require-key", Env: "RESTMCP_REQUIRE_KEY", Type: "bool",
			Usage: "Answer tools/call without an API key with 401. false: such a call goes on without a caller credential; an operation that needs none reaches the upstream, one that needs a key is answered with an error result naming its security scheme.",
		}, field: func(c *Config) any { return &c.RequireKey }},
		{Setting: Setting{
			Key: "public_mode", Flag: "public-mode", Env: "RESTMCP_PUBLIC_MODE", Type: "bool",
			Usage: "Anonymous public reads: every tools/call is metered under its client address (IPv6 by /64) and the default plan, whatever credential it presents; no caller credential is sent upstream. require_key is ignored.",
		}, field: func(c *Config) any { return &c.PublicMode }},
		{Setting: Setting{
			Key: "public_global_plan", Flag: "public-global-plan", Env: "RESTMCP_PUBLIC_GLOBAL_PLAN", Type: "string",
			Usage: "In public mode: a plan of the plans file whose limits apply to all public callers together. Empty: none.",
		}, field: func(c *Config) any { return &c.PublicGlobalPlan }},
		{Setting: Setting{
			Key: "trusted_proxies", Flag: "trusted-proxies", Env: "RESTMCP_TRUSTED_PROXIES", Type: "list",
			Usage: "Proxies (IP addresses or CIDR ranges) whose X-Forwarded-For names the client address. Empty: the TCP peer is the client.",
		}, field: func(c *Config) any { return &c.TrustedProxies }},
		{Setting: Setting{
			Key: "log_level", Flag: "log-level", Env: "RESTMCP_LOG_LEVEL", Type: "debug|info|warn|error",
			Usage: "Lowest level logged; debug logs every call.",
		}, field: func(c *Config) any { return &c.LogLevel }},
		{Setting: Setting{
			Key: "log_format", Flag: "log-format", Env: "RESTMCP_LOG_FORMAT", Type: "text|json",
			Usage: "Log output format on stderr.",
		}, field: func(c *Config) any { return &c.LogFormat }},
		{Setting: Setting{
			Key: "shutdown_timeout", Flag: "shutdown-timeout", Env: "RESTMCP_SHUTDOWN_TIMEOUT", Type: "duration",
			Usage: "Time in-flight requests get to finish after SIGINT or SIGTERM.",
		}, field: func(c *Config) any { return &c.ShutdownTimeout }},
		{Setting: Setting{
			Key: "read_header_timeout", Flag: "read-header-timeout", Env: "RESTMCP_READ_HEADER_TIMEOUT", Type: "duration",
			Usage: "Time a client has to send a request's headers.",
		}, field: func(c *Config) any { return &c.ReadHeaderTimeout }},
		{Setting: Setting{
			Key: "read_timeout", Flag: "read-timeout", Env: "RESTMCP_READ_TIMEOUT", Type: "duration",
			Usage: "Time a client has to send a whole request, body included; a slower one is cut off.",
		}, field: func(c *Config) any { return &c.ReadTimeout }},
		{Setting: Setting{
			Key: "idle_timeout", Flag: "idle-timeout", Env: "RESTMCP_IDLE_TIMEOUT", Type: "duration",
			Usage: "A keep-alive connection that sends no request for this long is closed.",
		}, field: func(c *Config) any { return &c.IdleTimeout }},
		{Setting: Setting{
			Key: "max_header_bytes", Flag: "max-header-bytes", Env: "RESTMCP_MAX_HEADER_BYTES", Type: "int",
			Usage: "Largest request line plus headers accepted, in bytes; larger requests get 431.",
		}, field: func(c *Config) any { return &c.MaxHeaderBytes }},
		{Setting: Setting{
			Key: "max_connections", Flag: "max-connections", Env: "RESTMCP_MAX_CONNECTIONS", Type: "int",
			Usage: "Most connections served at once; further ones wait to be accepted, so a flood of idle connections cannot use up file descriptors.",
		}, field: func(c *Config) any { return &c.MaxConnections }},
		{Setting: Setting{
			Key: "upstream_hosts", Flag: "upstream-hosts", Env: "RESTMCP_UPSTREAM_HOSTS", Type: "list",
			Usage: "With upstream set: further hosts (host or host:port; * for every host the document names) that operation- or path-level servers may name; they receive callers' keys. An operation on any other host is not served (strict: startup fails).",
		}, field: func(c *Config) any { return &c.UpstreamHosts }},
		{Setting: Setting{
			Key: "plans_file", Flag: "plans-file", Env: "RESTMCP_PLANS_FILE", Type: "path",
			Usage: "Plans file (YAML): per plan rate limits, quotas, allowed tools, costs and upgrade path; default_plan, key_mode (registry or open), counting, outage policy, static keys. Empty: one plan from rate_limit and rate_window, any key accepted.",
		}, field: func(c *Config) any { return &c.PlansFile }},
		{Setting: Setting{
			Key: "list_by_plan", Flag: "list-by-plan", Env: "RESTMCP_LIST_BY_PLAN", Type: "bool",
			Usage: "When tools/list carries an API key, list only the tools of the key's plan. Without a key every tool is listed.",
		}, field: func(c *Config) any { return &c.ListByPlan }},
		{Setting: Setting{
			Key: "event_max_len", Flag: "event-max-len", Env: "RESTMCP_EVENT_MAX_LEN", Type: "int",
			Usage: "Approximate number of usage events kept in the Redis stream restmcp:events (one per tools/call, for billing); -1 turns events off. Needs redis_url.",
		}, field: func(c *Config) any { return &c.EventMaxLen }},
		{Setting: Setting{
			Key: "metrics", Flag: "metrics", Env: "RESTMCP_METRICS", Type: "bool",
			Usage: "Serve Prometheus metrics at GET /metrics (calls by tool and outcome, meter decisions, Redis and upstream latency, outage state).",
		}, field: func(c *Config) any { return &c.Metrics }},
	}
}

// formatDuration writes 60s rather than time.Duration's 1m0s.
func formatDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// formatValue writes the field ptr points to as an environment variable
// would give it; "" for an empty list or map.
func formatValue(ptr any) string {
	switch p := ptr.(type) {
	case *string:
		return *p
	case *Secret:
		return string(*p)
	case *int:
		return strconv.Itoa(*p)
	case *int64:
		return strconv.FormatInt(*p, 10)
	case *bool:
		return strconv.FormatBool(*p)
	case *time.Duration:
		return formatDuration(*p)
	case *slog.Level:
		return levelName(*p)
	case *LogFormat:
		return string(*p)
	case *RedisMode:
		return string(*p)
	case modeField:
		return p.mode()
	case *[]string:
		return strings.Join(*p, ",")
	case *map[string]string:
		pairs := make([]string, 0, len(*p))
		for k, v := range *p {
			pairs = append(pairs, k+"="+v)
		}
		slices.Sort(pairs)
		return strings.Join(pairs, ",")
	}
	panic(fmt.Sprintf("config: setting field of unsupported type %T", ptr))
}

// valueKind is how the flag parser treats a setting: "bool" flags need no
// value, "list" and "map" flags accumulate when repeated.
func valueKind(ptr any) string {
	switch ptr.(type) {
	case *bool:
		return "bool"
	case *[]string:
		return "list"
	case *map[string]string:
		return "map"
	}
	return ""
}

// parseValue parses v, an environment variable's or a flag's text, into
// the field ptr points to: lists are comma-separated, maps are
// comma-separated key=value pairs.
func parseValue(ptr any, v string) error {
	switch p := ptr.(type) {
	case *string:
		*p = v
	case *Secret:
		*p = Secret(v)
	case *int:
		return parseInt(v, p)
	case *int64:
		return parseInt64(v, p)
	case *bool:
		return parseBool(v, p)
	case *time.Duration:
		return parseDuration(v, p)
	case *slog.Level:
		return parseLevel(v, p)
	case *LogFormat:
		return parseFormat(v, p)
	case *RedisMode:
		return parseRedisMode(v, p)
	case modeField:
		p.setMode(v)
	case *[]string:
		*p = splitList(v)
	case *map[string]string:
		return parseMap(v, p)
	default:
		panic(fmt.Sprintf("config: setting field of unsupported type %T", ptr))
	}
	return nil
}

// decodeNode sets the field ptr points to from a config file value n:
// strings and the items of lists and maps are trimmed of white space,
// empty list items are dropped, and an empty list or map equals leaving
// the key out (nil). Type errors are yaml.v3's, with n's line.
func decodeNode(ptr any, n *yaml.Node) error {
	switch p := ptr.(type) {
	case *string, *Secret, *slog.Level, *LogFormat, *RedisMode, modeField:
		var v string
		if err := n.Decode(&v); err != nil {
			return cleanYAMLError(err)
		}
		if err := parseValue(p, strings.TrimSpace(v)); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
	case *[]string:
		var l []string
		if err := n.Decode(&l); err != nil {
			return cleanYAMLError(err)
		}
		*p = nil
		for _, v := range l {
			if v = strings.TrimSpace(v); v != "" {
				*p = append(*p, v)
			}
		}
	case *map[string]string:
		var m map[string]string
		if err := n.Decode(&m); err != nil {
			return cleanYAMLError(err)
		}
		*p = trimmedMap(m)
	default: // *int, *int64, *bool, *time.Duration
		if err := n.Decode(p); err != nil {
			return cleanYAMLError(err)
		}
	}
	return nil
}

func parseInt(v string, dst *int) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("invalid integer %q", v)
	}
	*dst = n
	return nil
}

func parseInt64(v string, dst *int64) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return fmt.Errorf("invalid integer %q", v)
	}
	*dst = n
	return nil
}

func parseDuration(v string, dst *time.Duration) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf(`invalid duration %q (write a number with a unit, such as "30s" or "1m")`, v)
	}
	*dst = d
	return nil
}

func parseBool(v string, dst *bool) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("invalid boolean %q (use true or false)", v)
	}
	*dst = b
	return nil
}

func parseLevel(v string, dst *slog.Level) error {
	switch strings.ToLower(v) {
	case "debug":
		*dst = slog.LevelDebug
	case "info":
		*dst = slog.LevelInfo
	case "warn", "warning":
		*dst = slog.LevelWarn
	case "error":
		*dst = slog.LevelError
	default:
		return fmt.Errorf("invalid log level %q (use debug, info, warn or error)", v)
	}
	return nil
}

func parseRedisMode(v string, dst *RedisMode) error {
	switch m := RedisMode(strings.ToLower(v)); m {
	case RedisSingle, RedisCluster, RedisSentinel:
		*dst = m
	default:
		return fmt.Errorf("invalid Redis mode %q (use single, cluster or sentinel)", v)
	}
	return nil
}

func parseFormat(v string, dst *LogFormat) error {
	switch f := LogFormat(strings.ToLower(v)); f {
	case LogFormatText, LogFormatJSON:
		*dst = f
	default:
		return fmt.Errorf("invalid log format %q (use text or json)", v)
	}
	return nil
}

// splitList splits a comma-separated value, trimming spaces and dropping
// empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// parseMap parses comma-separated key=value pairs ("listPets=pets,
// getPet=pet"), trimming spaces and dropping empty items. A pair without
// "=", with an empty side, or with a key given twice is an error. No pairs
// gives nil.
func parseMap(v string, dst *map[string]string) error {
	var m map[string]string
	for _, item := range splitList(v) {
		k, val, ok := strings.Cut(item, "=")
		k, val = strings.TrimSpace(k), strings.TrimSpace(val)
		if !ok || k == "" || val == "" {
			return fmt.Errorf("invalid pair %q (write key=value)", item)
		}
		if _, dup := m[k]; dup {
			return fmt.Errorf("%q is given twice", k)
		}
		if m == nil {
			m = map[string]string{}
		}
		m[k] = val
	}
	*dst = m
	return nil
}

// quoted wraps each of l in backquotes, for Markdown.
func quoted(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = "`" + s + "`"
	}
	return out
}
