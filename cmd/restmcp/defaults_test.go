package main

import (
	"strings"
	"testing"

	"github.com/restmcp/restmcp/adapter"
	"github.com/restmcp/restmcp/adapter/oauth"
	"github.com/restmcp/restmcp/config"
	"github.com/restmcp/restmcp/openapi"
)

// TestAdapterDefaultsMatchSettings keeps the defaults of adapter.Options and
// openapi that are also settings equal to the config defaults: a program
// that uses adapter as a library gets the same server as the restmcp
// command. adapter and openapi must not import config, so the values are
// declared in each package and compared here, where all three meet.
func TestAdapterDefaultsMatchSettings(t *testing.T) {
	pairs := []struct {
		name          string
		library, flag any
	}{
		{"mcp_path", adapter.DefaultMCPPath, config.DefaultMCPPath},
		{"upstream_timeout", adapter.DefaultUpstreamTimeout, config.DefaultUpstreamTimeout},
		{"max_body_bytes", int64(adapter.DefaultMaxBodyBytes), config.DefaultMaxBodyBytes},
		{"max_response_bytes", int64(adapter.DefaultMaxResponseBytes), config.DefaultMaxResponseBytes},
		{"meter_timeout", adapter.DefaultMeterTimeout, config.DefaultMeterTimeout},
		{"max_tool_name_length", openapi.DefaultMaxNameLength, config.DefaultMaxToolNameLength},
		{"session_idle_timeout", adapter.DefaultSessionIdleTimeout, config.Default().SessionIdleTimeout},
		{"schema_budget_bytes", openapi.DefaultSchemaBudget, config.DefaultSchemaBudget},
		{"output_schema_budget", openapi.DefaultOutputSchemaBudget, config.DefaultOutputSchemaBudget},
		{"oauth_redirect_uris", strings.Join(oauth.DefaultRedirectURIs, " "), strings.Join(config.DefaultOAuthRedirectURIs, " ")},
		{"oauth_redirect_schemes", strings.Join(oauth.DefaultRedirectSchemes, " "), strings.Join(config.DefaultOAuthRedirectSchemes, " ")},
		{"oauth_register_limit", oauth.DefaultRegisterLimit, config.Default().OAuthRegisterLimit},
		{"oauth_signin_limit", oauth.DefaultSignInLimit, config.Default().OAuthSignInLimit},
		{"oauth_client_ttl", oauth.DefaultClientTTL, config.Default().OAuthClientTTL},
		{"oauth_max_clients", oauth.DefaultMaxClients, config.Default().OAuthMaxClients},
	}
	for _, p := range pairs {
		if p.library != p.flag {
			t.Errorf("%s: library default %v, setting default %v", p.name, p.library, p.flag)
		}
	}
}
