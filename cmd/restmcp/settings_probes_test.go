package main

import (
	"context"

	"github.com/restmcp/restmcp/adapter/idp"
	"github.com/restmcp/restmcp/adapter/idp/idptest"
	"github.com/restmcp/restmcp/adapter/oauth"

	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
)

// settingProbes gives, by config file key ("config" for --config), how
// each setting's effect shows on a running restmcp serve. The spec is
// testdata/settings/settings.yaml and the upstream a settingsUpstream
// unless a probe says otherwise.
func settingProbes() map[string]settingProbe {
	const (
		itemsArgs = `{"id":"7"}`
		slowArgs  = `{"ms":1500}`
	)
	names := func(want ...string) func(r *settingsRun) error {
		return func(r *settingsRun) error {
			got, err := r.toolNames()
			if err != nil {
				return err
			}
			return expect("tools", got, want)
		}
	}
	hasTool := func(name string) func(r *settingsRun) error {
		return func(r *settingsRun) error { _, err := r.tool(name); return err }
	}
	lacksTools := func(prefix, present string) func(r *settingsRun) error {
		return func(r *settingsRun) error {
			got, err := r.toolNames()
			if err != nil {
				return err
			}
			if !slices.Contains(got, present) || slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, prefix) }) {
				return fmt.Errorf("tools %v: want %s and none starting %s", got, present, prefix)
			}
			return nil
		}
	}
	status := func(method, path string, want int, hdr ...string) func(r *settingsRun) error {
		return func(r *settingsRun) error {
			a, err := r.do(method, path, "", hdr...)
			if err != nil {
				return err
			}
			return expect(method+" "+path+" status", a.status, want)
		}
	}
	// The log may reach the test after the banner: stdout and stderr
	// are copied from their pipes apart.
	stderrHas := func(s string) func(r *settingsRun) error {
		return func(r *settingsRun) error {
			if err := r.serving(); err != nil {
				return err
			}
			return pollUntil(2*time.Second, stderrHasNow(r, s))
		}
	}
	secondCall := func(want int, bodyHas string, hdr ...string) func(r *settingsRun) error {
		return func(r *settingsRun) error {
			if _, err := r.callOK("items_get", itemsArgs, hdr...); err != nil {
				return err
			}
			c, err := r.call("items_get", itemsArgs, hdr...)
			if err != nil {
				return err
			}
			if c.status != want || !strings.Contains(string(c.body), bodyHas) {
				return fmt.Errorf("second call: HTTP %d %s, want %d with %q", c.status, c.body, want, bodyHas)
			}
			return nil
		}
	}
	// Two calls that start a job that never ends: the second's answer says
	// it got no job handle, naming the cap.
	secondJob := func(cap string) func(r *settingsRun) error {
		return func(r *settingsRun) error {
			first, err := r.callOK("longjobs_start", `{}`)
			if err != nil {
				return err
			}
			if !strings.Contains(first.text, "call the tool job_status") {
				return fmt.Errorf("first job: no handle: %q", first.text)
			}
			c, err := r.callOK("longjobs_start", `{}`)
			if err != nil {
				return err
			}
			if !strings.Contains(c.text, "restmcp keeps no handle for it") || !strings.Contains(c.text, cap) {
				return fmt.Errorf("second job: %q, want no handle %s", c.text, cap)
			}
			return nil
		}
	}
	noKey := []string{"X-Api-Key", ""}
	// Resource-server mode: a token of the run's provider for its MCP URL
	// (ada, one hour), changed by f; a call of items_get with it.
	idpToken := func(r *settingsRun, f func(c *idptest.Claims)) string {
		c := idptest.Claims{Issuer: r.idp.URL, Subject: "ada", Audience: []string{r.mcp}, Expiry: time.Now().Add(time.Hour)}
		if f != nil {
			f(&c)
		}
		return r.idp.Token(c)
	}
	idpCall := func(r *settingsRun, tok string) (callResult, error) {
		if err := r.serving(); err != nil {
			return callResult{}, err
		}
		return r.call("items_get", itemsArgs, "X-Api-Key", "", "Authorization", "Bearer "+tok)
	}
	idpCallOK := func(r *settingsRun, tok string) error {
		c, err := idpCall(r, tok)
		if err == nil && (c.result == nil || c.result["isError"] == true) {
			err = fmt.Errorf("tools/call with the provider's token: HTTP %d %s", c.status, c.body)
		}
		return err
	}
	idpForward := map[string]string{"idp_issuer": "{idp}", "idp_upstream": "forward"}
	idpExchange := func(without string) map[string]string {
		m := map[string]string{"idp_issuer": "{idp}", "idp_client_id": "restmcp", "idp_exchange_audience": "https://items.example"}
		delete(m, without)
		return m
	}
	lastExchange := func(r *settingsRun, what, want string) error {
		if err := idpCallOK(r, idpToken(r, nil)); err != nil {
			return err
		}
		form, client, secret := r.idp.Last()
		got := map[string]string{"client": client, "secret": secret, "audience": strings.Join(form["audience"], ",")}[what]
		return expect("token exchange "+what, got, want)
	}
	noSecurity := map[string]string{"spec": "{dir}/nosec.yaml"}
	twoAtOnce := func(r *settingsRun) error {
		if err := r.serving(); err != nil {
			return err
		}
		got := concurrently(2, func() (callResult, error) { return r.call("slow_get", `{"ms":800}`) })
		return expect("statuses of two calls at once", got, []int{200, 429})
	}
	reload := func(r *settingsRun) error {
		if err := r.serving(); err != nil {
			return err
		}
		path := filepath.Join(r.dir, "settings.yaml")
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		data = []byte(strings.Replace(string(data), "description: The service's status.", "description: The service's status, reloaded.", 1))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
		later := time.Now().Add(2 * time.Second) // past the file server's one-second Last-Modified
		if err := os.Chtimes(path, later, later); err != nil {
			return err
		}
		return pollUntil(6*time.Second, func() error {
			tl, err := r.tool("status_get")
			if err != nil {
				return err
			}
			return expect("status_get description", tl["description"], "The service's status, reloaded.")
		})
	}
	initOK := func(r *settingsRun, hdr ...string) error {
		a, err := r.initialize(hdr...)
		if err != nil {
			return err
		}
		return expect("initialize status", a.status, 200)
	}
	secondInitialize := func(want int) func(r *settingsRun) error {
		return func(r *settingsRun) error {
			if err := initOK(r); err != nil {
				return err
			}
			a, err := r.initialize()
			if err != nil {
				return err
			}
			return expect("second initialize status", a.status, want)
		}
	}
	sessions := map[string]string{"sessions": "memory"}
	oauthOn := map[string]string{"oauth": "true"}
	oauthRedis := map[string]string{"oauth": "true", "redis_url": "{redis}", "oauth_encryption_key": "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}
	registers := func(redirect string) func(r *settingsRun) error {
		return func(r *settingsRun) error {
			a, err := r.registerClient(redirect)
			if err != nil {
				return err
			}
			return expect("registration of "+redirect, a.status, 201)
		}
	}
	secondStream := func(path string, hdr ...string) func(r *settingsRun) error {
		return func(r *settingsRun) error {
			first, err := r.openStream(path, hdr...)
			if err != nil {
				return err
			}
			defer first.Body.Close()
			if first.StatusCode != 200 {
				return fmt.Errorf("first stream: HTTP %d", first.StatusCode)
			}
			second, err := r.openStream(path, hdr...)
			if err != nil {
				return err
			}
			second.Body.Close()
			return expect("second stream status", second.StatusCode, 429)
		}
	}
	sessionStream := func(r *settingsRun) error {
		a, err := r.initialize()
		if err != nil {
			return err
		}
		id := a.header.Get("Mcp-Session-Id")
		return secondStream(r.mcp, "Mcp-Session-Id", id, "Accept", "text/event-stream")(r)
	}

	return map[string]settingProbe{
		"config": {value: "{dir}/config.yaml", check: func(r *settingsRun) error {
			info, err := r.serverInfo()
			if err != nil {
				return err
			}
			return expect("serverInfo.name", info["name"], "From the config file")
		}},
		"spec":    {value: "{dir}/settings.yaml", without: []string{"spec"}, check: hasTool("items_get")},
		"overlay": {value: "{dir}/overlay.yaml", check: toolField("status_get", "description", "Patched by the overlay.")},
		"ref_root": {value: "{dir}/split", with: map[string]string{"spec": "{dir}/split/api/api.yaml"}, check: func(r *settingsRun) error {
			a, err := r.rpc(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			if err != nil {
				return err
			}
			if !strings.Contains(string(a.body), "shared_field") {
				return fmt.Errorf("tools/list lacks the member from ../common: %s", a.body)
			}
			return nil
		}},
		"lenient": {value: "false", with: map[string]string{"spec": "{dir}/broken.yaml"}, check: func(r *settingsRun) error {
			if r.base != "" || !r.exited(5*time.Second) {
				return fmt.Errorf("serving %s", r.base)
			}
			if !strings.Contains(r.err.String(), "Missing") {
				return fmt.Errorf("the refusal does not name the broken reference")
			}
			return nil
		}},
		"watch":           {value: "true", check: reload},
		"reload_interval": {value: "1s", with: map[string]string{"spec": "{files}/settings.yaml"}, check: reload},

		"include_tags":       {value: "items", check: names("items_create", "items_get")},
		"exclude_tags":       {value: "items", check: lacksTools("items_", "status_get")},
		"include_operations": {value: "items.get", check: names("items_get")},
		"exclude_operations": {value: "items.*", check: lacksTools("items_", "status_get")},
		// The POSTs, two of which start jobs: job_status waits for those.
		"include_methods": {value: "post", check: names("items_create", "job_status", "jobs_start", "longjobs_start")},
		"exclude_methods": {value: "get", check: names("items_create", "job_status", "jobs_start", "longjobs_start")},
		"tool_names":      {value: "items.get=fetch_item", check: hasTool("fetch_item")},
		"tool_name_style": {value: "kebab", check: hasTool("items-get")},
		"tool_annotations": {value: "items.create=readOnly idempotent", check: toolField("items_create", "annotations",
			map[string]any{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true})},
		"max_tool_name_length": {value: "20", check: func(r *settingsRun) error {
			got, err := r.toolNames()
			if err != nil {
				return err
			}
			for _, n := range got {
				if len(n) > 20 {
					return fmt.Errorf("tool name %s is %d characters", n, len(n))
				}
			}
			return nil
		}},
		"tool_mode": {value: "compact", check: names("call_operation", "describe_operation", "search_operations")},
		"max_description_length": {value: "40", check: func(r *settingsRun) error {
			tl, err := r.tool("items_get")
			if err != nil {
				return err
			}
			d, _ := tl["description"].(string)
			if utf8.RuneCountInString(d) > 40 || !strings.HasSuffix(d, " …") {
				return fmt.Errorf("description %q", d)
			}
			return nil
		}},
		"output_schemas": {value: "false", check: noOutputSchemas},
		"schema_budget_bytes": {value: "300", check: func(r *settingsRun) error {
			tl, err := r.tool("items_create")
			if err != nil {
				return err
			}
			s, _ := json.Marshal(tl["inputSchema"])
			if !strings.Contains(string(s), "nested structure omitted") {
				return fmt.Errorf("inputSchema not cut: %s", s)
			}
			return nil
		}},
		"output_schemas_max_list_bytes": {value: "100", check: noOutputSchemas},
		"output_schema_budget": {value: "200", check: func(r *settingsRun) error {
			tl, err := r.tool("big_get")
			if err != nil {
				return err
			}
			s, _ := json.Marshal(tl["outputSchema"])
			if tl["outputSchema"] == nil || strings.Contains(string(s), "The deepest member of the answer.") {
				return fmt.Errorf("outputSchema not cut: %s", s)
			}
			return nil
		}},
		"report_max_tools":      {value: "2", check: stderrHas(`level=WARN msg="tools report: too large`)},
		"report_max_list_bytes": {value: "100", check: stderrHas(`level=WARN msg="tools report: too large`)},
		"strict_arguments": {value: "true", check: func(r *settingsRun) error {
			tl, err := r.tool("items_get")
			if err != nil {
				return err
			}
			in, _ := tl["inputSchema"].(map[string]any)
			return expect("items_get inputSchema additionalProperties", in["additionalProperties"], false)
		}},
		"resources": {value: "settings://status=status_get", check: func(r *settingsRun) error {
			a, err := r.rpc(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)
			if err != nil {
				return err
			}
			if !strings.Contains(string(a.body), `"uri":"settings://status"`) {
				return fmt.Errorf("resources/list: HTTP %d %s", a.status, a.body)
			}
			return nil
		}},
		"text_content": {value: "receipt", check: func(r *settingsRun) error {
			c, err := r.callOK("items_get", itemsArgs)
			if err != nil {
				return err
			}
			sc, _ := c.result["structuredContent"].(map[string]any)
			if strings.Contains(c.text, `"name"`) || sc["name"] != "thing" {
				return fmt.Errorf("not a receipt: text %q, structuredContent %v", c.text, sc)
			}
			return nil
		}},
		"error_structured_content": {value: "true", check: func(r *settingsRun) error {
			c, err := r.call("fail_get", `{}`)
			if err != nil {
				return err
			}
			return expect("fail_get isError and structuredContent", []any{c.result["isError"], c.result["structuredContent"]},
				[]any{true, map[string]any{"code": "bad", "retryable": false}})
		}},
		"upstream_errors": {value: "empty_array", check: func(r *settingsRun) error {
			c, err := r.callOK("fail_get", `{}`)
			if err != nil {
				return err
			}
			return expect("fail_get text", c.text, "[]")
		}},
		"jq_filter": {value: "true", check: func(r *settingsRun) error {
			c, err := r.callOK("items_get", `{"id":"7","jq_filter":".name"}`)
			if err != nil {
				return err
			}
			return expect("filtered text", c.text, `"thing"`)
		}},
		"jq_max_memory_bytes": {value: "67108864", with: map[string]string{"jq_filter": "true"}, check: func(r *settingsRun) error {
			c, err := r.call("items_get", `{"id":"7","jq_filter":"[range(3) | \"x\" * 40000000] | length"}`)
			if err != nil {
				return err
			}
			if c.result["isError"] != true || !strings.Contains(c.text, "jq_max_memory_bytes") {
				return fmt.Errorf("a 120 MB filter under a 64 MiB bound: %q", c.text)
			}
			return nil
		}},
		"response_meta": {value: "true", check: func(r *settingsRun) error {
			a, err := r.rpc(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			if err != nil {
				return err
			}
			meta, _ := jsonBody(a)["meta"].(map[string]any)
			if _, ok := meta["time"].(float64); !ok {
				return fmt.Errorf("no meta.time: %.200s", a.body)
			}
			return nil
		}},

		"upstream":         {value: "http://{up}", without: []string{"upstream"}, check: reaches("GET /v1/items/7")},
		"upstream_hosts":   {value: "localhost:9", check: hasTool("other_get")},
		"server_variables": {value: "port={upport}", without: []string{"upstream"}, check: reaches("GET /v1/items/7")},
		"default_security": {value: "header:X-Token", with: map[string]string{"spec": "{dir}/nosec.yaml"}, check: func(r *settingsRun) error {
			q, err := reached(r, "GET /v1/items/7")
			if err != nil {
				return err
			}
			return expect("X-Token upstream", q.Header.Get("X-Token"), settingsKey)
		}},
		"credential_parameters": {value: "token", check: func(r *settingsRun) error {
			tl, err := r.tool("items_get")
			if err != nil {
				return err
			}
			if s, _ := json.Marshal(tl["inputSchema"]); strings.Contains(string(s), `"token"`) {
				return fmt.Errorf("the credential parameter is in the schema: %s", s)
			}
			_, err = reached(r, "GET /v1/items/7?token="+settingsKey)
			return err
		}},
		"forward_headers": {value: "X-Culture", check: func(r *settingsRun) error {
			if _, err := r.callOK("items_get", itemsArgs, "X-Culture", "fr-CH"); err != nil {
				return err
			}
			q, err := r.upstreamSaw("GET /v1/items/7")
			if err != nil {
				return err
			}
			return expect("X-Culture upstream", q.Header.Get("X-Culture"), "fr-CH")
		}},
		"upstream_timeout": {value: "300ms", check: func(r *settingsRun) error {
			c, err := r.call("slow_get", slowArgs)
			if err != nil {
				return err
			}
			if c.result["isError"] != true || !strings.Contains(c.text, "300ms") {
				return fmt.Errorf("a 1.5 s answer under a 300 ms limit: HTTP %d %s", c.status, c.body)
			}
			return nil
		}},
		"max_response_bytes": {value: "1000", check: func(r *settingsRun) error {
			c, err := r.callOK("big_get", `{}`)
			if err != nil {
				return err
			}
			if len(c.text) > 1500 || !strings.HasSuffix(c.text, "[truncated: showing 1000 of more than 1000 bytes]") {
				return fmt.Errorf("a 5,000-byte answer under a 1,000-byte bound: %d bytes ending %q", len(c.text), c.text[max(0, len(c.text)-80):])
			}
			return nil
		}},
		"max_concurrent_calls_per_host": {value: "1", check: twoAtOnce},
		// On by default (25 s): turned off, the 202 is the answer.
		"async_wait": {value: "0s", check: func(r *settingsRun) error {
			c, err := r.callOK("jobs_start", `{}`)
			if err != nil {
				return err
			}
			return expect("jobs_start text", c.text, `{"accepted":true}`)
		}},
		"idp_issuer": {value: "{idp}", with: map[string]string{"idp_upstream": "forward"}, check: func(r *settingsRun) error {
			if err := r.serving(); err != nil {
				return err
			}
			a, err := r.do(http.MethodGet, r.base+"/.well-known/oauth-protected-resource/mcp", "")
			if err != nil {
				return err
			}
			return expect("protected resource metadata", string(a.body), `{"authorization_servers":["`+r.idp.URL+`"],"bearer_methods_supported":["header"],"resource":"`+r.mcp+`","resource_name":"restmcp"}`)
		}},
		"idp_audience": {value: "https://mcp.example.com/mcp", with: idpForward, check: func(r *settingsRun) error {
			return idpCallOK(r, idpToken(r, func(c *idptest.Claims) { c.Audience = []string{"https://mcp.example.com/mcp"} }))
		}},
		"idp_algorithms": {value: "ES256", with: idpForward, check: func(r *settingsRun) error {
			c, err := idpCall(r, idpToken(r, nil))
			if err != nil {
				return err
			}
			if c.status != 401 || !strings.Contains(string(c.body), "(accepted: ES256)") {
				return fmt.Errorf("an RS256 token with only ES256 accepted: HTTP %d %s", c.status, c.body)
			}
			return nil
		}},
		"idp_identity_claim": {value: "email", with: idpForward, check: func(r *settingsRun) error {
			return idpCallOK(r, idpToken(r, func(c *idptest.Claims) { c.Subject, c.Extra = "", map[string]any{"email": "ada@example.com"} }))
		}},
		"idp_plan_claim": {value: "tier", with: map[string]string{"idp_issuer": "{idp}", "idp_upstream": "forward", "plans_file": "{dir}/plans.yaml"}, check: func(r *settingsRun) error {
			c, err := idpCall(r, idpToken(r, func(c *idptest.Claims) { c.Extra = map[string]any{"tier": "platinum"} }))
			if err != nil {
				return err
			}
			if c.status != 403 || !strings.Contains(string(c.body), `the plan \"platinum\" your access token names`) {
				return fmt.Errorf("a token naming an undefined plan: HTTP %d %s", c.status, c.body)
			}
			return nil
		}},
		// Exchange by default: forward hands the upstream the inbound token.
		"idp_upstream": {value: "forward", with: idpExchange(""), check: func(r *settingsRun) error {
			tok := idpToken(r, nil)
			if err := idpCallOK(r, tok); err != nil {
				return err
			}
			q, err := r.upstreamSaw("GET /v1/items/7")
			if err != nil {
				return err
			}
			return expect("the upstream's X-Api-Key", q.Header.Get("X-Api-Key"), tok)
		}},
		"idp_client_id": {value: "restmcp-probe", with: idpExchange("idp_client_id"), check: func(r *settingsRun) error {
			return lastExchange(r, "client", "restmcp-probe")
		}},
		"idp_client_secret": {value: "s3cret", with: idpExchange(""), check: func(r *settingsRun) error {
			return lastExchange(r, "secret", "s3cret")
		}},
		"idp_exchange_audience": {value: "https://ledger.example", with: idpExchange("idp_exchange_audience"), check: func(r *settingsRun) error {
			return lastExchange(r, "audience", "https://ledger.example")
		}},
		// A job that never ends, watched 3 s: polls 1 s apart make 2, 2 s apart 1.
		"async_poll_interval": {value: "2s", with: map[string]string{"async_wait": "3s"}, check: func(r *settingsRun) error {
			c, err := r.callOK("longjobs_start", `{}`)
			if err != nil {
				return err
			}
			if !strings.Contains(c.text, "(1 polls)") {
				return fmt.Errorf("a job watched 3 s with polls 2 s apart: %q", c.text)
			}
			return nil
		}},
		// On by default: off, no companion tool and no job handle.
		"tasks": {value: "off", check: func(r *settingsRun) error {
			names, err := r.toolNames()
			if err != nil {
				return err
			}
			if slices.Contains(names, "job_status") {
				return fmt.Errorf("tasks off, yet tools/list has job_status: %v", names)
			}
			return nil
		}},
		"task_ttl": {value: "90s", check: func(r *settingsRun) error {
			c, err := r.call("job_status", `{"job":"no-such-job"}`)
			if err != nil {
				return err
			}
			return expect("job_status of an unknown handle", c.text, `unknown job "no-such-job": no job of this caller has that handle (it may have ended more than 90s ago)`)
		}},
		"max_tasks_per_key": {value: "1", with: map[string]string{"async_wait": "1s"}, check: secondJob("(max_tasks_per_key)")},
		"max_tasks":         {value: "1", with: map[string]string{"async_wait": "1s"}, check: secondJob("(max_tasks)")},
		"binary_link_bytes": {value: "1000", check: func(r *settingsRun) error {
			_, err := fileLink(r)
			return err
		}},
		"max_download_bytes": {value: "2000", with: map[string]string{"binary_link_bytes": "1000"}, check: func(r *settingsRun) error {
			uri, err := fileLink(r)
			if err != nil {
				return err
			}
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": map[string]string{"uri": uri}})
			a, err := r.rpc(string(b))
			if err != nil {
				return err
			}
			if !strings.Contains(string(a.body), "the 2000-byte limit for downloads (max_download_bytes)") {
				return fmt.Errorf("a 5,000-byte download under a 2,000-byte bound: %.300s", a.body)
			}
			return nil
		}},
		// An operation that needs a key is answered with an error result
		// naming its scheme; one that needs none reaches the upstream.
		"require_key": {value: "false", with: noSecurity, check: func(r *settingsRun) error {
			_, err := r.callOK("items_get", itemsArgs, noKey...)
			return err
		}},
		"plans_file": {value: "{dir}/plans.yaml", check: func(r *settingsRun) error {
			c, err := r.call("status_get", `{}`)
			if err != nil {
				return err
			}
			if c.result["isError"] != true || !strings.Contains(c.text, "plan") {
				return fmt.Errorf("a tool outside the plan: HTTP %d %s", c.status, c.body)
			}
			return nil
		}},
		"rate_limit": {value: "1", check: secondCall(429, "rate limit")},
		"rate_window": {value: "1s", with: map[string]string{"rate_limit": "1"}, check: func(r *settingsRun) error {
			if err := secondCall(429, "")(r); err != nil {
				return err
			}
			// Admitted again once the 1 s window has passed (refused
			// calls count nothing).
			return pollUntil(3*time.Second, func() error {
				_, err := r.callOK("items_get", itemsArgs)
				return err
			})
		}},
		"list_by_plan": {value: "true", with: map[string]string{"plans_file": "{dir}/plans.yaml"}, check: names("items_create", "items_get")},
		"public_mode": {value: "true", with: noSecurity, check: func(r *settingsRun) error {
			_, err := r.callOK("items_get", itemsArgs, noKey...)
			return err
		}},
		"public_global_plan": {value: "global", with: map[string]string{"public_mode": "true", "plans_file": "{dir}/plans.yaml", "spec": "{dir}/nosec.yaml"},
			check: secondCall(429, "global", noKey...)},
		"unauthorized_message": {value: "Register at https://example.test to get a key.", check: func(r *settingsRun) error {
			c, err := r.call("items_get", itemsArgs, noKey...)
			if err != nil {
				return err
			}
			if c.status != 401 || !strings.Contains(string(c.body), "Register at https://example.test to get a key.") {
				return fmt.Errorf("HTTP %d %s", c.status, c.body)
			}
			return nil
		}},
		"rate_limited_message": {value: "Slow down, friend.", with: map[string]string{"rate_limit": "1"}, check: secondCall(429, "Slow down, friend.")},

		"redis_url": {value: "{redis}", redis: true, check: func(r *settingsRun) error {
			key := uniqueKey()
			if _, err := r.callOK("items_get", itemsArgs, "X-Api-Key", key); err != nil {
				return err
			}
			return eventOf(r.redisURL, key)
		}},
		"redis_mode": {value: "cluster", cluster: true, with: map[string]string{"redis_url": "{cluster}"}, check: func(r *settingsRun) error {
			_, err := r.callOK("items_get", itemsArgs, "X-Api-Key", uniqueKey())
			return err
		}},
		"meter_timeout": {value: "200ms", with: map[string]string{"redis_url": "redis://{mute}"}, check: func(r *settingsRun) error {
			start := time.Now()
			c, err := r.call("items_get", itemsArgs)
			if err != nil {
				return err
			}
			if took := time.Since(start); c.status != 503 || took > 1500*time.Millisecond {
				return fmt.Errorf("HTTP %d after %v against a Redis that never answers", c.status, took.Round(time.Millisecond))
			}
			return nil
		}},
		"event_max_len": {value: "-1", redis: true, with: map[string]string{"redis_url": "{redis}"}, check: func(r *settingsRun) error {
			key := uniqueKey()
			if _, err := r.callOK("items_get", itemsArgs, "X-Api-Key", key); err != nil {
				return err
			}
			if eventOf(r.redisURL, key) == nil {
				return fmt.Errorf("a usage event was written")
			}
			return nil
		}},

		"oauth":          {value: "true", check: status("GET", "/.well-known/oauth-protected-resource/oauth/mcp", 200)},
		"oauth_mcp_path": {value: "/connect/mcp", with: oauthOn, check: status("GET", "/.well-known/oauth-protected-resource/connect/mcp", 200)},
		"oauth_encryption_key": {value: "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", redis: true,
			with: map[string]string{"oauth": "true", "redis_url": "{redis}", "addr": "127.0.0.1:{free}"}, check: func(r *settingsRun) error {
				// A token one process issued is served by another with the
				// same key (after the first has stopped, on its address).
				token, err := r.oauthToken(settingsKey, "/oauth/mcp")
				if err != nil {
					return err
				}
				r.stop()
				t2 := r.twin()
				defer t2.stop()
				a, err := t2.rpcAt("/oauth/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Authorization", "Bearer "+token, "X-Api-Key", "")
				if err != nil {
					return err
				}
				return expect("tools/list with the first process's token on the second", a.status, 200)
			}},
		"oauth_keys_url": {value: "https://example.test/keys", with: oauthOn, check: func(r *settingsRun) error {
			a, err := r.signInPage()
			if err != nil {
				return err
			}
			if !strings.Contains(string(a.body), `href="https://example.test/keys"`) {
				return fmt.Errorf("sign-in page HTTP %d without the keys link", a.status)
			}
			return nil
		}},
		"oauth_verify_operation": {value: "status_get", with: oauthOn, check: func(r *settingsRun) error {
			if _, err := r.oauthToken("refused-key", "/oauth/mcp"); err == nil {
				return fmt.Errorf("a key the upstream refuses signed in")
			}
			_, err := r.upstreamSaw("GET /v1/status")
			return err
		}},
		"oauth_redirect_uris":    {value: "https://app.example.test/callback", with: oauthOn, check: registers("https://app.example.test/callback")},
		"oauth_redirect_schemes": {value: "myapp", with: oauthOn, check: registers("myapp://oauth/callback")},
		"oauth_register_limit": {value: "1", with: oauthOn, check: func(r *settingsRun) error {
			if err := registers("http://127.0.0.1:1/a")(r); err != nil {
				return err
			}
			a, err := r.registerClient("http://127.0.0.1:1/b")
			if err != nil {
				return err
			}
			return expect("second registration status", a.status, 429)
		}},
		"oauth_signin_limit": {value: "1", with: oauthOn, check: func(r *settingsRun) error {
			if _, err := r.oauthToken(settingsKey, "/oauth/mcp"); err != nil {
				return err
			}
			_, err := r.oauthToken(settingsKey, "/oauth/mcp")
			if err == nil || !strings.Contains(err.Error(), "HTTP 429") {
				return fmt.Errorf("second sign-in: %v", err)
			}
			return nil
		}},
		// In Redis a client is a key that expires (1 min is the least).
		"oauth_client_ttl": {value: "1m", redis: true, with: oauthRedis, check: func(r *settingsRun) error {
			client, err := r.oauthClient()
			if err != nil {
				return err
			}
			ttl, err := redisTTL(r.redisURL, "restmcp:oauth:client:"+client)
			if err != nil {
				return err
			}
			if ttl <= 0 || ttl > time.Minute {
				return fmt.Errorf("the client's key expires in %v", ttl)
			}
			return nil
		}},
		// An identity assertion of the run's own provider is a grant, and
		// its token calls a tool with the key the setting's variable holds.
		"oauth_enterprise_idps": {value: "{idp}=SETTINGS_EMA_KEY", with: oauthOn, env: map[string]string{"SETTINGS_EMA_KEY": settingsKey}, check: func(r *settingsRun) error {
			client, err := r.oauthClient()
			if err != nil {
				return err
			}
			jag := r.idp.Token(idptest.Claims{Issuer: r.idp.URL, Subject: "ada", Audience: []string{r.base}, IssuedAt: time.Now(), Expiry: time.Now().Add(time.Minute),
				ID: "jti-1", Type: idp.AssertionType, Extra: map[string]any{"client_id": client, "resource": r.base + "/oauth/mcp"}})
			a, err := r.do(http.MethodPost, "/oauth/token", url.Values{"grant_type": {oauth.GrantTypeJWTBearer}, "assertion": {jag}, "client_id": {client}}.Encode(),
				"Content-Type", "application/x-www-form-urlencoded")
			if err != nil {
				return err
			}
			token, _ := jsonBody(a)["access_token"].(string)
			if a.status != 200 || token == "" {
				return fmt.Errorf("the JWT bearer grant: HTTP %d %s", a.status, a.body)
			}
			c, err := r.rpcAt("/oauth/mcp", callBody(1, "items_get", itemsArgs), "Authorization", "Bearer "+token, "X-Api-Key", "")
			if err != nil {
				return err
			}
			if !strings.Contains(string(c.body), `"result"`) || strings.Contains(string(c.body), `"isError":true`) {
				return fmt.Errorf("a call with the token: HTTP %d %s", c.status, c.body)
			}
			q, err := r.upstreamSaw("GET /v1/items/7")
			if err != nil {
				return err
			}
			return expect("the upstream's key", q.Header.Get("X-Api-Key"), settingsKey)
		}},
		"oauth_max_clients": {value: "1", with: oauthOn, check: func(r *settingsRun) error {
			first, err := r.oauthClient()
			if err != nil {
				return err
			}
			if err := registers("http://127.0.0.1:2/callback")(r); err != nil {
				return err
			}
			a, err := r.do("GET", r.authorizeURL(first, strings.Repeat("v", 50), "/oauth/mcp"), "")
			if err != nil {
				return err
			}
			return expect("sign-in page status for the dropped client", a.status, 400)
		}},

		"mcp_path": {value: "/rpc", check: func(r *settingsRun) error {
			a, err := r.rpcAt("/rpc", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			if err != nil {
				return err
			}
			return expect("POST /rpc status", a.status, 200)
		}},
		"server_name":    {value: "Probe Server", check: infoField("name", "Probe Server")},
		"server_version": {value: "9.9.9", check: infoField("version", "9.9.9")},
		"protocol_versions": {value: "2025-03-26", check: func(r *settingsRun) error {
			a, err := r.initialize("MCP-Protocol-Version", "")
			if err != nil {
				return err
			}
			res, _ := jsonBody(a)["result"].(map[string]any)
			return expect("negotiated protocolVersion", res["protocolVersion"], "2025-03-26")
		}},
		"sessions": {value: "memory", check: func(r *settingsRun) error {
			a, err := r.initialize()
			if err != nil {
				return err
			}
			if a.header.Get("Mcp-Session-Id") == "" {
				return fmt.Errorf("initialize issued no session: HTTP %d", a.status)
			}
			return nil
		}},
		"session_idle_timeout": {value: "1s", with: sessions, check: func(r *settingsRun) error {
			a, err := r.initialize()
			if err != nil {
				return err
			}
			// Past the 1 s idle timeout. A real wait: any request on the
			// session would keep it alive, so there is nothing to poll.
			time.Sleep(1500 * time.Millisecond)
			b, err := r.rpc(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "Mcp-Session-Id", a.header.Get("Mcp-Session-Id"))
			if err != nil {
				return err
			}
			return expect("status with an idle session", b.status, 404)
		}},
		"max_sessions":             {value: "1", with: sessions, check: secondInitialize(503)},
		"max_sessions_per_address": {value: "1", with: sessions, check: secondInitialize(429)},
		"max_streams_per_session":  {value: "1", with: sessions, check: sessionStream},
		"legacy_sse_path": {value: "/sse", check: func(r *settingsRun) error {
			resp, err := r.openStream("/sse", "Accept", "text/event-stream")
			if err != nil {
				return err
			}
			resp.Body.Close()
			return expect("GET /sse", resp.StatusCode, 200)
		}},
		"max_legacy_streams_per_address": {value: "1", with: map[string]string{"legacy_sse_path": "/sse"}, check: secondStream("/sse", "Accept", "text/event-stream")},
		"stream_accept_strict": {value: "true", with: sessions, check: func(r *settingsRun) error {
			a, err := r.initialize()
			if err != nil {
				return err
			}
			resp, err := r.openStream(r.mcp, "Mcp-Session-Id", a.header.Get("Mcp-Session-Id"), "Accept", "")
			if err != nil {
				return err
			}
			resp.Body.Close()
			return expect("GET without Accept", resp.StatusCode, 405)
		}},
		"unknown_tool_not_found": {value: "true", check: func(r *settingsRun) error {
			c, err := r.call("nope", `{}`)
			if err != nil {
				return err
			}
			return expect("status and RateLimit-Policy for an unknown tool", []any{c.status, c.header.Get("RateLimit-Policy")},
				[]any{404, `100;w=60;policy="rate"`})
		}},
		"unknown_method_not_found": {value: "true", check: func(r *settingsRun) error {
			a, err := r.rpc(`{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`)
			if err != nil {
				return err
			}
			return expect("status for prompts/list", a.status, 404)
		}},
		"accept_requests_without_id": {value: "true", check: func(r *settingsRun) error {
			a, err := r.rpc(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"items_get","arguments":{"id":"7"}}}`)
			if err != nil {
				return err
			}
			return expect("status and body", []any{a.status, string(a.body)}, []any{202, ""})
		}},
		"error_codes": {value: "unauthorized=-32001", check: func(r *settingsRun) error {
			c, err := r.call("items_get", itemsArgs, noKey...)
			if err != nil {
				return err
			}
			return expect("JSON-RPC code of a call without a key", c.errorCode(), -32001)
		}},

		"addr": {value: "127.0.0.1:{free}", check: func(r *settingsRun) error {
			return expect("served at", r.base, fmt.Sprintf("http://127.0.0.1:%d", r.free))
		}},
		"public_url": {value: "https://mcp.example.test/mcp", check: func(r *settingsRun) error {
			if !strings.Contains(r.out.String(), "at https://mcp.example.test/mcp\n") {
				return fmt.Errorf("the banner does not show the public URL")
			}
			return nil
		}},
		"allowed_origins": {value: "https://app.example.test", check: func(r *settingsRun) error {
			a, err := r.rpc(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Origin", "https://app.example.test")
			if err != nil {
				return err
			}
			return expect("status with the allowed Origin", a.status, 200)
		}},
		"origin_refusal_text": {value: "true", check: func(r *settingsRun) error {
			a, err := r.rpc(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Origin", "https://evil.example.test")
			if err != nil {
				return err
			}
			return expect("refusal", []any{a.status, a.header.Get("Content-Type"), strings.TrimSpace(string(a.body))},
				[]any{403, "text/plain; charset=utf-8", "Forbidden: origin not allowed"})
		}},
		"trusted_proxies": {value: "127.0.0.1", with: map[string]string{"sessions": "memory", "max_sessions_per_address": "1"}, check: func(r *settingsRun) error {
			if err := initOK(r, "X-Forwarded-For", "198.51.100.1"); err != nil {
				return err
			}
			return initOK(r, "X-Forwarded-For", "198.51.100.2")
		}},
		"max_body_bytes": {value: "1000", check: func(r *settingsRun) error {
			a, err := r.rpc(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"pad":"` + strings.Repeat("x", 2000) + `"}}}`)
			if err != nil {
				return err
			}
			return expect("status of a 2,000-byte request", a.status, 413)
		}},
		// Past the bound (and net/http's 4,096 bytes of slack) the server
		// answers 431 and closes; a client still writing may see the
		// connection reset instead.
		"max_header_bytes": {value: "2000", check: func(r *settingsRun) error {
			conn, err := r.rawConn()
			if err != nil {
				return err
			}
			defer conn.Close()
			_, _ = conn.Write([]byte("GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("x", 10000) + "\r\n\r\n"))
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			line, err := bufio.NewReader(conn).ReadString('\n')
			if err != nil && !errors.Is(err, syscall.ECONNRESET) {
				return err
			}
			if err == nil && !strings.HasPrefix(line, "HTTP/1.1 431 ") {
				return fmt.Errorf("10,000 bytes of headers: %q", line)
			}
			return nil
		}},
		"max_connections": {value: "1", check: func(r *settingsRun) error {
			held, err := r.rawConn()
			if err != nil {
				return err
			}
			defer held.Close()
			// The held connection is accepted first: it is answered, and
			// then kept open (keep-alive), holding the one place.
			_, _ = held.Write([]byte("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
			_ = held.SetReadDeadline(time.Now().Add(5 * time.Second))
			if line, err := bufio.NewReader(held).ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 200 ") {
				return fmt.Errorf("the first connection: %q, %v", line, err)
			}
			c := &http.Client{Timeout: time.Second}
			resp, err := c.Get(r.base + "/health")
			if err == nil {
				resp.Body.Close()
				return fmt.Errorf("a second connection was served (HTTP %d) while the first was held", resp.StatusCode)
			}
			return nil
		}},
		"max_concurrent_calls": {value: "1", check: twoAtOnce},
		"read_header_timeout": {value: "500ms", check: func(r *settingsRun) error {
			conn, err := r.rawConn()
			if err != nil {
				return err
			}
			defer conn.Close()
			_, _ = conn.Write([]byte("GET /health HTTP/1.1\r\nHost: x\r\n"))
			return closedWithin(conn, 2*time.Second)
		}},
		"read_timeout": {value: "500ms", check: func(r *settingsRun) error {
			conn, err := r.rawConn()
			if err != nil {
				return err
			}
			defer conn.Close()
			_, _ = conn.Write([]byte("POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\""))
			return closedWithin(conn, 2*time.Second)
		}},
		"idle_timeout": {value: "500ms", check: func(r *settingsRun) error {
			conn, err := r.rawConn()
			if err != nil {
				return err
			}
			defer conn.Close()
			_, _ = conn.Write([]byte("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
			return closedWithin(conn, 2*time.Second)
		}},
		"shutdown_timeout": {value: "1s", check: func(r *settingsRun) error {
			if err := r.serving(); err != nil {
				return err
			}
			go func() { _, _ = r.call("slow_get", `{"ms":6000}`) }()
			if _, err := r.upstreamSaw("GET /v1/slow?ms=6000"); err != nil {
				return err
			}
			_ = r.cmd.Process.Signal(syscall.SIGTERM)
			if !r.exited(3500 * time.Millisecond) {
				return fmt.Errorf("still running 3.5 s after SIGTERM with a call in flight")
			}
			return nil
		}},
		"llms_txt":      {value: "false", check: status("GET", "/llms.txt", 404)},
		"markdown_page": {value: "/docs/mcp.md", check: status("GET", "/docs/mcp.md", 200)},
		"serve_openapi": {value: "true", check: status("GET", "/openapi.json", 200)},
		"log_level": {value: "debug", check: func(r *settingsRun) error {
			if _, err := r.callOK("items_get", itemsArgs); err != nil {
				return err
			}
			return pollUntil(2*time.Second, stderrHasNow(r, "level=DEBUG"))
		}},
		"log_format": {value: "json", check: func(r *settingsRun) error {
			if err := r.serving(); err != nil {
				return err
			}
			return pollUntil(2*time.Second, func() error {
				if !strings.HasPrefix(r.err.String(), `{"time":`) {
					return fmt.Errorf("the log is not JSON lines: %.100s", r.err.String())
				}
				return nil
			})
		}},
		"metrics": {value: "false", check: status("GET", "/metrics", 404)},
		"timing_meta": {value: "true", check: func(r *settingsRun) error {
			c, err := r.callOK("items_get", itemsArgs)
			if err != nil {
				return err
			}
			meta, _ := c.result["_meta"].(map[string]any)
			if _, ok := meta["io.restmcp/timing"].(map[string]any); !ok {
				return fmt.Errorf("no _meta io.restmcp/timing: %s", c.body)
			}
			return nil
		}},
	}
}

func stderrHasNow(r *settingsRun, s string) func() error {
	return func() error {
		if !strings.Contains(r.err.String(), s) {
			return fmt.Errorf("the log lacks %q", s)
		}
		return nil
	}
}

// toolField checks one member of one tool in tools/list.
func toolField(tool, member string, want any) func(r *settingsRun) error {
	return func(r *settingsRun) error {
		tl, err := r.tool(tool)
		if err != nil {
			return err
		}
		return expect(tool+" "+member, tl[member], want)
	}
}

// infoField checks one member of initialize's serverInfo.
func infoField(member, want string) func(r *settingsRun) error {
	return func(r *settingsRun) error {
		info, err := r.serverInfo()
		if err != nil {
			return err
		}
		return expect("serverInfo."+member, info[member], want)
	}
}

// noOutputSchemas: no tool lists an outputSchema.
func noOutputSchemas(r *settingsRun) error {
	ts, err := r.tools()
	if err != nil {
		return err
	}
	for _, tl := range ts {
		if tl["outputSchema"] != nil {
			return fmt.Errorf("%s has an outputSchema", tl["name"])
		}
	}
	return nil
}

// reached calls items_get and returns the upstream request with line.
func reached(r *settingsRun, line string) (*http.Request, error) {
	if _, err := r.callOK("items_get", `{"id":"7"}`); err != nil {
		return nil, err
	}
	return r.upstreamSaw(line)
}

// reaches is reached as a check.
func reaches(line string) func(r *settingsRun) error {
	return func(r *settingsRun) error { _, err := reached(r, line); return err }
}

// redisTTL is the time to live of a Redis key.
func redisTTL(redisURL, key string) (time.Duration, error) {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return 0, err
	}
	c := redis.NewClient(opt)
	defer c.Close()
	return c.TTL(context.Background(), key).Result()
}

// fileLink calls file_get and returns the resource_link's URI its 5,000
// bytes became.
func fileLink(r *settingsRun) (string, error) {
	c, err := r.callOK("file_get", `{}`)
	if err != nil {
		return "", err
	}
	content, _ := c.result["content"].([]any)
	for _, x := range content {
		if m, _ := x.(map[string]any); m["type"] == "resource_link" {
			uri, _ := m["uri"].(string)
			return uri, nil
		}
	}
	return "", fmt.Errorf("no resource_link: %.300s", c.body)
}
