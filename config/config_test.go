package config

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestDefaultIsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v, want nil", err)
	}
}

func TestValidateCollectsEveryProblem(t *testing.T) {
	c := Config{
		Spec:              "ftp://files.example/openapi.yaml",
		Upstream:          "api.example.com/v1",
		Addr:              "localhost",
		MCPPath:           "mcp/",
		RedisURL:          "http://:hunter2@cache:6379",
		RateLimit:         0,
		RateWindow:        -time.Second,
		UpstreamTimeout:   0,
		MeterTimeout:      -time.Second,
		MaxBodyBytes:      0,
		MaxResponseBytes:  -5,
		JQMaxMemoryBytes:  1,
		AllowedOrigins:    []string{"https://ok.example", "https://app.example/path", "app.example"},
		MaxToolNameLength: 8,
		LogLevel:          slog.Level(2),
		LogFormat:         "xml",
		ShutdownTimeout:   0,
		PlansFile:         "plans.yaml ",
		UpstreamHosts:     []string{"eu.example", "https://eu.example"},
		PublicGlobalPlan:  "everyone",
		TrustedProxies:    []string{"10.0.0.0/8", "proxy.example"},
	}
	want := []string{
		`spec: must be an http or https URL; got "ftp://files.example/openapi.yaml"`,
		`upstream: has no scheme: add http:// or https://, e.g. "http://api.example.com/v1"`,
		`addr: must be host:port (e.g. 127.0.0.1:8080 or 0.0.0.0:8080); got "localhost"`,
		`mcp_path: must start with /; got "mcp/"`,
		`redis_url: scheme must be redis, rediss or unix; got "http"`,
		`redis_mode: must be single, cluster or sentinel; got ""`,
		`rate_limit: must be at least 1, or -1 to disable rate limiting; got 0`,
		`rate_window: must be positive; got -1s`,
		`upstream_timeout: must be positive; got 0s`,
		`meter_timeout: must be positive; got -1s`,
		`max_body_bytes: must be positive; got 0`,
		`max_response_bytes: must be positive; got -5`,
		`async_poll_interval: must be from 100ms to 1m; got 0s`,
		`tasks: must be auto, memory, redis or off; got ""`,
		`task_ttl: must be from 1m to 168h (7 days); got 0s`,
		`max_tasks_per_key: must be 1 or more; got 0`,
		`max_tasks: must be 1 or more; got 0`,
		`max_download_bytes: must be positive; got 0`,
		`jq_max_memory_bytes: must be at least 67108864 (64 MiB): a jq worker needs that much to start; got 1`,
		`allowed_origins: "https://app.example/path": an origin has no path, query, fragment or user info (drop the trailing /)`,
		`allowed_origins: "app.example": must be "scheme://host[:port]" (e.g. https://app.example.com) or "*"`,
		`max_tool_name_length: must be from 16 to 128; got 8`,
		`log_level: must be debug, info, warn or error; got INFO+2`,
		`log_format: must be text or json; got "xml"`,
		`shutdown_timeout: must be positive; got 0s`,
		`read_header_timeout: must be positive; got 0s`,
		`read_timeout: must be positive; got 0s`,
		`idle_timeout: must be positive; got 0s`,
		`max_header_bytes: must be positive; got 0`,
		`max_connections: must be positive; got 0`,
		`public_global_plan: needs public_mode: true`,
		`sessions: must be off, memory or redis; got ""`,
		`session_idle_timeout: must be positive; got 0s`,
		`upstream_errors: must be error or empty_array; got ""`,
		`text_content: must be full or receipt; got ""`,
		`tool_name_style: must be snake, kebab or as_is; got ""`,
		`tool_mode: must be full or compact; got ""`,
		`trusted_proxies: "proxy.example" is not an IP address or CIDR range`,
		`upstream_hosts: "https://eu.example" is not a host or host:port`,
		`plans_file: has leading or trailing spaces`,
		`event_max_len: must be at least 1, or -1 to turn usage events off; got 0`,
		`report_max_tools: must be at least 1, or -1 to disable the warning; got 0`,
		`max_description_length: must be at least 16, or -1 for no cap; got 0`,
		`schema_budget_bytes: must be at least 1, or -1 for no cap; got 0`,
		`output_schemas_max_list_bytes: must be at least 1, or -1 to keep output schemas whatever the size; got 0`,
		`output_schema_budget: must be at least 1, or -1 for no cap; got 0`,
		`report_max_list_bytes: must be at least 1, or -1 to disable the warning; got 0`,
	}
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate() = nil, want errors")
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		t.Fatalf("Validate() returned %T, want an errors.Join result", err)
	}
	if got := len(joined.Unwrap()); got != len(want) {
		t.Errorf("got %d errors, want %d", got, len(want))
	}
	if got, w := err.Error(), strings.Join(want, "\n"); got != w {
		t.Errorf("Validate():\n got:\n%s\nwant:\n%s", got, w)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Validate() leaks the Redis password: %s", err)
	}
}

func TestValidateFields(t *testing.T) {
	tests := []struct {
		name   string
		modify func(c *Config)
		want   string // "" for valid
	}{
		{"spec file", func(c *Config) { c.Spec = "specs/openapi.yaml" }, ""},
		{"spec https", func(c *Config) { c.Spec = "https://api.example.com/openapi.json" }, ""},
		{"spec windows path", func(c *Config) { c.Spec = `C:\specs\api.yaml` }, ""},
		{"spec relative with ://", func(c *Config) { c.Spec = "./a://b.yaml" }, ""},
		{"spec url without host", func(c *Config) { c.Spec = "https:///openapi.json" }, `spec: URL has no host: "https:///openapi.json"`},
		{"spec with spaces", func(c *Config) { c.Spec = " a.yaml" }, "spec: has leading or trailing spaces"},
		{"upstream host only", func(c *Config) { c.Upstream = "http://127.0.0.1:9000" }, ""},
		{"upstream without scheme", func(c *Config) { c.Upstream = "127.0.0.1:9901" }, `upstream: has no scheme: add http:// or https://, e.g. "http://127.0.0.1:9901"`},
		{"upstream without scheme with path", func(c *Config) { c.Upstream = "localhost:9901/v1" }, `upstream: has no scheme: add http:// or https://, e.g. "http://localhost:9901/v1"`},
		{"upstream ftp with password", func(c *Config) { c.Upstream = "ftp://u:pw@files.example" }, `upstream: must be an http or https URL; got "ftp://u:xxxxx@files.example"`},
		{"upstream with credentials", func(c *Config) { c.Upstream = "https://u:p@api.example.com" }, "upstream: URL must not contain credentials"},
		{"oauth on loopback without public_url", func(c *Config) { c.OAuth = true }, ""},
		{"oauth https public_url", func(c *Config) { c.OAuth, c.PublicURL = true, "https://mcp.example.com/mcp" }, ""},
		{"oauth http loopback public_url", func(c *Config) { c.OAuth, c.PublicURL = true, "http://127.0.0.1:8080/mcp" }, ""},
		{"oauth http public_url", func(c *Config) { c.OAuth, c.PublicURL = true, "http://mcp.example.com/mcp" }, `public_url: must be https for oauth: codes and tokens would cross the network in the clear (http is allowed on loopback only); got "http://mcp.example.com/mcp"`},
		{"oauth path is mcp_path", func(c *Config) { c.OAuth, c.OAuthMCPPath = true, "/mcp" }, `oauth_mcp_path: "/mcp" is mcp_path too; OAuth clients and header clients need one path each`},
		{"oauth with redis and no key", func(c *Config) { c.OAuth, c.RedisURL = true, "redis://127.0.0.1:6379/0" }, "oauth_encryption_key: is required with redis_url: every replica must open the keys sealed in Redis (make one with: openssl rand -base64 32)"},
		{"oauth key not base64", func(c *Config) { c.OAuthEncryptionKey = "not base64!" }, "oauth_encryption_key: is not base64 (make one with: openssl rand -base64 32)"},
		{"oauth key 16 bytes", func(c *Config) { c.OAuthEncryptionKey = "MDEyMzQ1Njc4OWFiY2RlZg==" }, "oauth_encryption_key: must be 32 bytes once decoded, got 16 (make one with: openssl rand -base64 32)"},
		{"oauth key url-safe unpadded", func(c *Config) { c.OAuthEncryptionKey = "-_8AAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0" }, ""},
		{"oauth redirect http", func(c *Config) { c.OAuthRedirectURIs = []string{"http://app.example/cb"} }, `oauth_redirect_uris: "http://app.example/cb" is not an https URL without a fragment, or a pattern https://host/path/*`},
		{"addr all interfaces", func(c *Config) { c.Addr = ":8080" }, ""},
		{"addr ipv6", func(c *Config) { c.Addr = "[::1]:8080" }, ""},
		{"addr bad port", func(c *Config) { c.Addr = "127.0.0.1:http" }, `addr: port must be a number from 0 to 65535; got "http"`},
		{"addr port too big", func(c *Config) { c.Addr = ":70000" }, `addr: port must be a number from 0 to 65535; got "70000"`},
		{"mcp_path nested", func(c *Config) { c.MCPPath = "/api/mcp" }, ""},
		{"mcp_path root", func(c *Config) { c.MCPPath = "/" }, ""},
		{"mcp_path trailing slash", func(c *Config) { c.MCPPath = "/mcp/" }, `mcp_path: must not end with /; got "/mcp/"`},
		{"mcp_path wildcard", func(c *Config) { c.MCPPath = "/mcp/*x" }, `mcp_path: must be a plain path without ?, #, :, * or spaces; got "/mcp/*x"`},
		{"redis url", func(c *Config) { c.RedisURL = "redis://:pw@127.0.0.1:6379/0" }, ""},
		{"rediss url", func(c *Config) { c.RedisURL = "rediss://default:pw@cache.example:6380" }, ""},
		{"unix socket", func(c *Config) { c.RedisURL = "unix:///run/redis.sock?db=1" }, ""},
		{"redis url without host", func(c *Config) { c.RedisURL = "redis:///0" }, "redis_url: redis:// and rediss:// URLs need a host, as in redis://127.0.0.1:6379/0"},
		{"redis url unparsable", func(c *Config) { c.RedisURL = "redis://:pw@host:port/0" }, "redis_url: not a valid URL (value not shown: it may contain a password)"},
		{"rate limit disabled", func(c *Config) { c.RateLimit = -1 }, ""},
		{"plans file", func(c *Config) { c.PlansFile = "plans.yaml" }, ""},
		{"events off", func(c *Config) { c.EventMaxLen = -1 }, ""},
		{"events small", func(c *Config) { c.EventMaxLen = 1 }, ""},
		{"events -2", func(c *Config) { c.EventMaxLen = -2 }, "event_max_len: must be at least 1, or -1 to turn usage events off; got -2"},
		{"rate limit -2", func(c *Config) { c.RateLimit = -2 }, "rate_limit: must be at least 1, or -1 to disable rate limiting; got -2"},
		{"rate window sub-millisecond", func(c *Config) { c.RateWindow = 1500 * time.Microsecond }, "rate_window: must be a whole number of milliseconds; got 1.5ms"},
		{"origins any", func(c *Config) { c.AllowedOrigins = []string{"*"} }, ""},
		{"origins with port", func(c *Config) { c.AllowedOrigins = []string{"http://localhost:3000"} }, ""},
		{"origins upper case", func(c *Config) { c.AllowedOrigins = []string{"https://App.example"} }, `allowed_origins: "https://App.example": must be lower-case`},
		{"tool name length max", func(c *Config) { c.MaxToolNameLength = 128 }, ""},
		{"tool name length too long", func(c *Config) { c.MaxToolNameLength = 129 }, "max_tool_name_length: must be from 16 to 128; got 129"},
		{"log level debug", func(c *Config) { c.LogLevel = slog.LevelDebug }, ""},
		{"methods", func(c *Config) { c.IncludeMethods, c.ExcludeMethods = []string{"get", "HEAD"}, []string{"Delete"} }, ""},
		{"unknown methods", func(c *Config) { c.IncludeMethods, c.ExcludeMethods = []string{"fetch"}, []string{"*"} },
			`include_methods: unknown HTTP method "fetch" (use get, put, post, delete, options, head, patch or trace)` + "\n" +
				`exclude_methods: unknown HTTP method "*" (use get, put, post, delete, options, head, patch or trace)`},
		{"tool names", func(c *Config) { c.ToolNames = map[string]string{"listPets": "pets", "get-pet": "Get-Pet_2"} }, ""},
		{"tool names invalid, sorted by operationId", func(c *Config) {
			c.MaxToolNameLength = 16
			c.ToolNames = map[string]string{"b": "list pets", "a": "a_name_that_is_too_long"}
		}, `tool_names: a: "a_name_that_is_too_long" must be 1 to 16 characters from A-Z a-z 0-9 _ -` + "\n" +
			`tool_names: b: "list pets" must be 1 to 16 characters from A-Z a-z 0-9 _ -`},
		{"report thresholds off", func(c *Config) { c.ReportMaxTools, c.ReportMaxListBytes = -1, -1 }, ""},
		{"report thresholds -2", func(c *Config) { c.ReportMaxTools, c.ReportMaxListBytes = -2, 0 },
			"report_max_tools: must be at least 1, or -1 to disable the warning; got -2\n" +
				"report_max_list_bytes: must be at least 1, or -1 to disable the warning; got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.modify(&c)
			err := c.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Validate() = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "pw") {
				t.Errorf("Validate() leaks the Redis password: %s", got)
			}
		})
	}
}

func TestRateLimitEnabled(t *testing.T) {
	for _, tt := range []struct {
		limit int
		want  bool
	}{{100, true}, {1, true}, {-1, false}} {
		c := Default()
		c.RateLimit = tt.limit
		if got := c.RateLimitEnabled(); got != tt.want {
			t.Errorf("RateLimit %d: RateLimitEnabled() = %v, want %v", tt.limit, got, tt.want)
		}
	}
}

// TestErrorCodesSetting: error_codes takes the three names and integers.
func TestErrorCodesSetting(t *testing.T) {
	c := Default()
	c.ErrorCodes = map[string]string{"unauthorized": "-32001", "teapot": "418", "unavailable": "x"}
	err := c.Validate()
	want := "error_codes: \"teapot\" is not one of unauthorized, rate_limited, unavailable\nerror_codes: unavailable: \"x\" is not a non-zero integer"
	if err == nil || err.Error() != want {
		t.Errorf("Validate() = %v\nwant %s", err, want)
	}
}

// TestConfigLogValue: the startup line names the spec and the metering
// store, and only the settings that differ from their defaults, never the
// Redis URL.
func TestConfigLogValue(t *testing.T) {
	c := Default()
	c.Addr = "0.0.0.0:8080"
	c.RateLimit = 10
	c.IncludeTags = []string{"pets", "store"}
	c.RedisURL = "redis://:hunter2@cache:6379/0"
	c.LogLevel = slog.LevelDebug
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	log.Info("starting", "config", c)
	want := "level=INFO msg=starting config.spec=\"(bundled demo)\" config.metering=redis config.addr=0.0.0.0:8080 config.rate_limit=10 config.include_tags=pets,store config.log_level=debug\n"
	if got := buf.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	buf.Reset()
	log.Info("starting", "config", Default())
	if got, want := buf.String(), "level=INFO msg=starting config.spec=\"(bundled demo)\" config.metering=memory\n"; got != want {
		t.Errorf("defaults: got  %s\nwant %s", got, want)
	}
}

// TestValidateEnterpriseIdPs: oauth_enterprise_idps names issuers (https,
// or http on loopback) and environment variable names, and needs oauth.
func TestValidateEnterpriseIdPs(t *testing.T) {
	c := Default()
	c.OAuthEnterpriseIdPs = map[string]string{"https://acme.okta.example": "ACME_API_KEY"}
	if err := c.Validate(); err == nil || err.Error() != "oauth_enterprise_idps: needs oauth: the assertions are taken by the OAuth front's token endpoint" {
		t.Errorf("without oauth: %v", err)
	}
	c.OAuth = true
	if err := c.Validate(); err != nil {
		t.Errorf("a good one: %v", err)
	}
	c.OAuthEnterpriseIdPs = map[string]string{"http://idp.example": "KEY", "https://ok.example": "the key", "http://127.0.0.1:9000": "LOCAL_KEY"}
	want := `oauth_enterprise_idps: "http://idp.example" is not an issuer URL (https, or http on loopback)` + "\n" +
		`oauth_enterprise_idps: "https://ok.example": "the key" is not the name of an environment variable (letters, digits and _), which holds the API key`
	if err := c.Validate(); err == nil || err.Error() != want {
		t.Errorf("bad ones:\n got %v\nwant %s", err, want)
	}
}
