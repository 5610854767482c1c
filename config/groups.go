package config

import "strings"

// SettingGroup is one concern of the settings, in the order the settings
// reference (docs/settings.md) and --help present them.
type SettingGroup struct {
	// Name is the group's title, e.g. "Upstream".
	Name string
	// About says in one sentence what the group's settings decide.
	About string
	// keys are the config file keys of its settings ("" is the config file
	// setting itself), in presentation order.
	keys []string
}

// settingGroups sorts every setting into one concern. TestSettingGroups
// checks that each setting is in exactly one group.
var settingGroups = []SettingGroup{{
	Name:  "Document and tools",
	About: "Which OpenAPI document is served, which of its operations become tools, how tools are named and described, and how their results are written.",
	keys: []string{"", "spec", "overlay", "ref_root", "lenient", "watch", "reload_interval",
		"include_tags", "exclude_tags", "include_operations", "exclude_operations", "include_methods", "exclude_methods",
		"tool_names", "tool_annotations", "tool_name_style", "max_tool_name_length", "tool_mode", "max_description_length",
		"output_schemas", "schema_budget_bytes", "output_schemas_max_list_bytes", "output_schema_budget",
		"report_max_tools", "report_max_list_bytes", "strict_arguments", "resources",
		"text_content", "error_structured_content", "upstream_errors", "jq_filter", "jq_max_memory_bytes", "response_meta"},
}, {
	Name:  "Upstream",
	About: "Where calls go and how the caller's key and arguments are sent there.",
	keys: []string{"upstream", "upstream_hosts", "server_variables", "default_security", "credential_parameters",
		"forward_headers", "upstream_timeout", "max_response_bytes", "binary_link_bytes", "max_download_bytes", "async_wait", "async_poll_interval",
		"tasks", "task_ttl", "max_tasks_per_key", "max_tasks", "max_concurrent_calls_per_host"},
}, {
	Name:  "Keys and plans",
	About: "Who may call, under which plan, rate limit and quota, and what a refused caller is told.",
	keys: []string{"require_key", "plans_file", "rate_limit", "rate_window", "list_by_plan",
		"public_mode", "public_global_plan", "unauthorized_message", "rate_limited_message"},
}, {
	Name:  "Metering and Redis",
	About: "Where calls are counted and how long a call may wait for the count.",
	keys:  []string{"redis_url", "redis_mode", "meter_timeout", "event_max_len"},
}, {
	Name:  "OAuth",
	About: "The sign-in for clients that cannot send an API key (Claude, ChatGPT and other connectors).",
	keys: []string{"oauth", "oauth_mcp_path", "oauth_encryption_key", "oauth_keys_url", "oauth_verify_operation",
		"oauth_redirect_uris", "oauth_redirect_schemes", "oauth_register_limit", "oauth_signin_limit",
		"oauth_client_ttl", "oauth_max_clients", "oauth_enterprise_idps"},
}, {
	Name:  "Identity provider",
	About: "Sign-in through the vendor's own OpenID provider: its access tokens accepted, metered by its claims, exchanged (or a bound key) for the upstream call.",
	keys: []string{"idp_issuer", "idp_audience", "idp_algorithms", "idp_identity_claim", "idp_plan_claim", "idp_upstream",
		"idp_client_id", "idp_client_secret", "idp_exchange_audience"},
}, {
	Name:  "Sessions and transports",
	About: "The MCP endpoint itself: its path, protocol versions, sessions, legacy SSE and JSON-RPC answers.",
	keys: []string{"mcp_path", "server_name", "server_version", "protocol_versions", "sessions", "session_idle_timeout",
		"max_sessions", "max_sessions_per_address", "max_streams_per_session", "legacy_sse_path",
		"max_legacy_streams_per_address", "stream_accept_strict", "unknown_tool_not_found", "unknown_method_not_found", "accept_requests_without_id",
		"error_codes"},
}, {
	Name:  "HTTP server",
	About: "The listener, the public URL, the pages served beside MCP, and the limits every request meets.",
	keys: []string{"addr", "public_url", "allowed_origins", "origin_refusal_text", "trusted_proxies",
		"max_body_bytes", "max_header_bytes", "max_connections", "max_concurrent_calls",
		"read_header_timeout", "read_timeout", "idle_timeout", "shutdown_timeout",
		"llms_txt", "markdown_page", "serve_openapi"},
}, {
	Name:  "Observability",
	About: "Logs, metrics and timing.",
	keys:  []string{"log_level", "log_format", "metrics", "timing_meta"},
}}

// Section is the group's section in a config file: its name in lower
// case, words joined by "_" ("Keys and plans": keys_and_plans).
func (g SettingGroup) Section() string {
	return strings.ReplaceAll(strings.ToLower(g.Name), " ", "_")
}

// sections are the config file's section names; sectionOf maps each
// config file key to its group's section.
var sections, sectionOf = func() (map[string]bool, map[string]string) {
	names, of := map[string]bool{}, map[string]string{}
	for _, g := range settingGroups {
		names[g.Section()] = true
		for _, k := range g.keys {
			of[k] = g.Section()
		}
	}
	return names, of
}()

// SettingGroups returns the groups with their settings, in order.
func SettingGroups() []GroupedSettings {
	byKey := map[string]Setting{}
	for _, s := range Settings() {
		byKey[s.Key] = s
	}
	out := make([]GroupedSettings, len(settingGroups))
	for i, g := range settingGroups {
		out[i].SettingGroup = g
		for _, k := range g.keys {
			if s, ok := byKey[k]; ok {
				out[i].Settings = append(out[i].Settings, s)
			}
		}
	}
	return out
}

// GroupedSettings is a group and its settings.
type GroupedSettings struct {
	SettingGroup
	Settings []Setting
}
