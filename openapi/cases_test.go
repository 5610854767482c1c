package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCaseToolNames(t *testing.T) {
	tests := []struct {
		name string
		dir  string
		opts LoadOptions
		want []string
	}{
		{"C03 fallback names", "C03-missing-operationid", LoadOptions{},
			[]string{"delete", "get_users", "get_users_user_id_orders", "post_users_user_id_orders", "get_v_2_reports_daily_summary_csv"}},
		{"C04 collisions", "C04-name-collision", LoadOptions{},
			[]string{"list_users", "list_users_2", "list_users_3", "get_user", "list_users_4", "list_users_2_2"}},
		{"C05 long names", "C05-name-length", LoadOptions{},
			[]string{"ping", "service_accounts_management_controller_update_service_a_7336256c", "service_accounts_management_controller_update_service_a_cea1ce0c"}},
		{"C05 max 40", "C05-name-length", LoadOptions{MaxNameLength: 40},
			[]string{"ping", "service_accounts_management_con_7336256c", "service_accounts_management_con_cea1ce0c"}},
		{"C06 charset", "C06-name-charset", LoadOptions{},
			[]string{"cr_er_facture", "get_members_member_id", "create_order", "pets_find_by_status", "get_status", "users_list"}},
		{"C25 auth", "C25-auth", LoadOptions{},
			[]string{"get_forecast", "get_maps", "get_me", "get_status", "get_weather"}},
		{"C20 servers", "C20-servers", LoadOptions{},
			[]string{"get_reports", "list_things", "get_upload"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := loadCase(t, tt.dir, "", tt.opts)
			if diff := cmp.Diff(tt.want, toolNames(d)); diff != "" {
				t.Errorf("tool names (-want +got):\n%s", diff)
			}
			for _, tl := range d.Tools {
				if !isToolName(tl.Name, 64) {
					t.Errorf("invalid name %q", tl.Name)
				}
				if tl.Description == "" {
					t.Errorf("%s: empty description", tl.Name)
				}
			}
		})
	}
}

func TestCaseDescriptions(t *testing.T) {
	tests := []struct {
		dir, tool, wantTitle, wantDesc string
	}{
		{"C03-missing-operationid", "delete", "Reset the sandbox", "Reset the sandbox"},
		{"C03-missing-operationid", "get_users", "", "GET /users"},
		{"C06-name-charset", "get_members_member_id", "获取用户", "获取用户"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			tl := toolByName(t, loadCase(t, tt.dir, "", LoadOptions{}), tt.tool)
			if tl.Title != tt.wantTitle || tl.Description != tt.wantDesc {
				t.Errorf("title, description = %q, %q; want %q, %q", tl.Title, tl.Description, tt.wantTitle, tt.wantDesc)
			}
		})
	}
}

// TestCaseC04Deterministic loads the collision case twice, and once with
// the paths in reverse order, and expects identical names and one warning
// per renamed operation naming its operationId and the chosen name.
func TestCaseC04Deterministic(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	a := loadCase(t, "C04-name-collision", "", LoadOptions{Logger: log})
	b := loadCase(t, "C04-name-collision", "", LoadOptions{})
	if diff := cmp.Diff(toolNames(a), toolNames(b)); diff != "" {
		t.Errorf("second load differs (-first +second):\n%s", diff)
	}
	// Same document with path items in reverse order and keys shuffled.
	shuffled := `openapi: 3.0.3
info: {version: 1.0.0, title: shuffled}
paths:
  /zeta/users:
    get: {responses: {'200': {description: OK}}, operationId: listUsers2}
  /v2/users:
    get: {operationId: list-users, responses: {'200': {description: OK}}}
  /users/{id}:
    get:
      parameters: [{schema: {type: string}, required: true, in: path, name: id}]
      responses: {'200': {description: OK}}
      operationId: getUser
  /users:
    get: {operationId: listUsers, responses: {'200': {description: OK}}}
  /legacy/users:
    get: {operationId: ListUsers, responses: {'200': {description: OK}}}
  /admin/users:
    get: {operationId: list_users, responses: {'200': {description: OK}}}
servers: [{url: 'http://upstream.test/v1'}]
`
	c, err := LoadData(context.Background(), []byte(shuffled), "", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(toolNames(a), toolNames(c)); diff != "" {
		t.Errorf("shuffled document differs (-original +shuffled):\n%s", diff)
	}
	var warnings []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec struct {
			Level, Msg, OperationID string
			Tool                    string `json:"tool"`
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		rec.Level, _ = m["level"].(string)
		rec.OperationID, _ = m["operation_id"].(string)
		rec.Tool, _ = m["tool"].(string)
		if rec.Level == "WARN" {
			warnings = append(warnings, rec.OperationID+" -> "+rec.Tool)
		}
	}
	want := []string{"ListUsers -> list_users_2", "listUsers -> list_users_3", "list-users -> list_users_4", "listUsers2 -> list_users_2_2"}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

func TestCaseInputSchemas(t *testing.T) {
	tests := []struct {
		dir, file, tool, want string
	}{
		{"C01-circular-ref", "", "create_comment", `{"type":"object","properties":{"threadId":{"type":"string"},"text":{"type":"string"},"replies":{"type":"array","items":{"type":"object","description":"Recursive reference to Comment; structure not expanded"}}},"required":["threadId","text"]}`},
		{"C01-circular-ref", "", "search_records", `{"type":"object","properties":{"filter":{"type":"object","properties":{"field":{"type":"string"},"equals":{"type":"string"},"group":{"type":"object","properties":{"op":{"type":"string","enum":["and","or"]},"filters":{"type":"array","items":{"type":"object","description":"Recursive reference to Filter; structure not expanded"}}}}}}},"required":["filter"]}`},
		{"C02-external-ref", "", "create_pet", `{"type":"object","properties":{"name":{"type":"string"},"tag":{"type":"string","maxLength":32}},"required":["name"]}`},
		{"C02-external-ref", "", "get_pet", `{"type":"object","properties":{"petId":{"type":"string"}},"required":["petId"]}`},
		{"C03-missing-operationid", "", "get_users_user_id_orders", `{"type":"object","properties":{"userId":{"type":"string"},"status":{"type":"string","enum":["open","shipped"]}},"required":["userId"]}`},
		{"C03-missing-operationid", "", "post_users_user_id_orders", `{"type":"object","properties":{"userId":{"type":"string"},"sku":{"type":"string"},"qty":{"type":"integer"}},"required":["userId","sku"]}`},
		{"C03-missing-operationid", "", "get_users", `{"type":"object","properties":{}}`},
		{"C05-name-length", "", "service_accounts_management_controller_update_service_a_cea1ce0c", `{"type":"object","properties":{"id":{"type":"string"},"groupIds":{"type":"array","items":{"type":"string"}}},"required":["id","groupIds"]}`},
		{"C08-path-templating", "", "list_tasks", `{"type":"object","properties":{"projectId":{"type":"string"},"X-Tenant":{"type":"string"},"limit":{"type":"integer"}},"required":["projectId","X-Tenant"]}`},
		{"C08-path-templating", "", "create_task", `{"type":"object","properties":{"projectId":{"type":"string"},"X-Tenant":{"type":"string","description":"Optional for creation; defaults to the caller's tenant."},"title":{"type":"string"}},"required":["projectId","title"]}`},
		{"C10-query-array-styles", "", "search_items", `{"type":"object","properties":{"ids":{"type":"array","items":{"type":"integer"},"description":"form, explode omitted (defaults to true)"},"tags":{"type":"array","items":{"type":"string"}},"states":{"type":"array","items":{"type":"string"},"description":"explode omitted (defaults to false for pipeDelimited)"},"words":{"type":"array","items":{"type":"string"}},"q":{"type":"string"}}}`},
		{"C12-property-keys", "", "list_records", `{"type":"object","properties":{"filter_status":{"type":"string","description":"Query parameter ` + "`filter[status]`" + `."},"top":{"type":"integer","description":"Query parameter ` + "`$top`" + `."},"filter":{"type":"string","description":"Query parameter ` + "`$filter`" + `."},"page_size_2":{"type":"integer","description":"Query parameter ` + "`page[size]`" + `."},"page_size":{"type":"integer","description":"Legacy alias kept by the API."},"ids":{"type":"array","items":{"type":"string"},"description":"Query parameter ` + "`ids[]`" + `."},"X-Correlation-Id":{"type":"string"},"this_is_an_extremely_long_query_parameter_name_used_by_b451bcb7":{"type":"string","description":"Query parameter ` + "`this_is_an_extremely_long_query_parameter_name_used_by_a_legacy_reporting_api`" + `."}}}`},
		{"C14-param-body-collision", "", "update_user", `{"type":"object","properties":{"id":{"type":"string"},"dryRun":{"type":"boolean"},"body":{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"},"email":{"type":"string"}},"required":["id","name"]}},"required":["id","body"]}`},
		{"C14-param-body-collision", "", "patch_profile", `{"type":"object","properties":{"id":{"type":"string"},"nickname":{"type":"string"}},"required":["id"]}`},
		{"C14-param-body-collision", "", "set_values", `{"type":"object","properties":{"values":{"type":"string"},"body":{"type":"array","items":{"type":"integer"}}},"required":["values","body"]}`},
		{"C15-non-object-body", "", "create_users", `{"type":"object","properties":{"body":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"email":{"type":"string"}},"required":["name"]}}},"required":["body"]}`},
		{"C15-non-object-body", "", "put_note_text", `{"type":"object","properties":{"noteId":{"type":"string"},"body":{"type":"string"}},"required":["noteId","body"]}`},
		{"C15-non-object-body", "", "increment_counter", `{"type":"object","properties":{"name":{"type":"string"},"body":{"type":"integer"}},"required":["name"]}`},
		{"C16-form-multipart", "", "request_token", `{"type":"object","properties":{"grant_type":{"type":"string","enum":["client_credentials","refresh_token"]},"scope":{"type":"string"},"client_id":{"type":"string"}},"required":["grant_type"]}`},
		{"C16-form-multipart", "", "upload_file", `{"type":"object","properties":{"file":{"type":"string","contentEncoding":"base64","description":"File content, base64-encoded."},"purpose":{"type":"string"}},"required":["file"]}`},
		{"C17-composition", "", "create_ad_set", `{"type":"object","properties":{"name":{"type":"string"},"budget":{"type":"integer"},"campaignId":{"type":"string"},"owner":{"anyOf":[{"type":"object","properties":{"userId":{"type":"string"}},"required":["userId"]},{"type":"object","properties":{"teamId":{"type":"string"}},"required":["teamId"]}]}},"required":["name","campaignId"]}`},
		{"C17-composition", "", "create_pet", `{"type":"object","properties":{"petType":{"type":"string","enum":["cat","dog"],"description":"Variant-specific fields: cat: meowVolume; dog: packSize."},"name":{"type":"string"},"meowVolume":{"type":"integer"},"packSize":{"type":"integer"}},"required":["petType","name"]}`},
		{"C18-nullable", "", "patch_task", `{"type":"object","properties":{"taskId":{"type":"string"},"title":{"anyOf":[{"type":"string"},{"type":"null"}]},"dueDate":{"anyOf":[{"type":"string","format":"date"},{"type":"null"}]},"priority":{"anyOf":[{"type":"string","enum":["low","high"]},{"type":"null"}]},"labels":{"anyOf":[{"type":"array","items":{"type":"string"}},{"type":"null"}]},"estimate":{"type":"integer"}},"required":["taskId"]}`},
		{"C18-nullable", "openapi-3.1.yaml", "patch_task", `{"type":"object","properties":{"taskId":{"type":"string"},"title":{"anyOf":[{"type":"string"},{"type":"null"}]},"dueDate":{"anyOf":[{"type":"string","format":"date"},{"type":"null"}]},"priority":{"anyOf":[{"type":"string","enum":["low","high"]},{"type":"null"}]},"labels":{"anyOf":[{"type":"array","items":{"type":"string"}},{"type":"null"}]},"estimate":{"anyOf":[{"type":"integer"},{"type":"string"}]}},"required":["taskId"]}`},
		{"C18-nullable", "", "list_tasks", `{"type":"object","properties":{"assignee":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`},
		{"C20-servers", "", "get_upload", `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`},
		{"C21-swagger2", "", "list_orders", `{"type":"object","properties":{"ids":{"type":"array","items":{"type":"integer"}},"states":{"type":"array","items":{"type":"string"}},"tags":{"type":"array","items":{"type":"string"}}}}`},
		{"C21-swagger2", "", "create_order", `{"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer"}},"required":["sku"]}`},
		{"C21-swagger2", "", "upload_attachment", `{"type":"object","properties":{"orderId":{"type":"string"},"file":{"type":"string","contentEncoding":"base64","description":"File content, base64-encoded."},"note":{"type":"string"}},"required":["orderId","file"]}`},
		{"C23-upstream-errors", "", "get_pet", `{"type":"object","properties":{"petId":{"type":"string"}},"required":["petId"]}`},
		{"C25-auth", "", "get_weather", `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`},
		{"C25-auth", "", "get_me", `{"type":"object","properties":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.dir+"/"+tt.file+"/"+tt.tool, func(t *testing.T) {
			opts := LoadOptions{Upstream: "http://upstream.test", UpstreamHosts: []string{"*"}}
			tl := toolByName(t, loadCase(t, tt.dir, tt.file, opts), tt.tool)
			if diff := cmp.Diff(canonicalJSON(t, tt.want), canonicalJSON(t, string(tl.InputSchema))); diff != "" {
				t.Errorf("inputSchema (-want +got):\n%s", diff)
			}
		})
	}
}

type call struct {
	name    string
	dir     string
	file    string
	opts    LoadOptions
	tool    string
	args    string
	key     string
	want    string // dumpRequest output
	wantErr string // error text prefix; with want == ""
}

func runCalls(t *testing.T, tests []call) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := loadCase(t, tt.dir, tt.file, tt.opts)
			tl := toolByName(t, d, tt.tool)
			req, err := tl.NewRequest(context.Background(), json.RawMessage(tt.args), tt.key)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("NewRequest(%s) = %s; want error %q", tt.args, dumpRequest(t, req), tt.wantErr)
				}
				if !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("NewRequest(%s) error = %q; want prefix %q", tt.args, err, tt.wantErr)
				}
				var ae *ArgumentError
				var ce *CredentialError
				if !errors.As(err, &ae) && !errors.As(err, &ce) {
					t.Errorf("error %T is neither *ArgumentError nor *CredentialError", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewRequest(%s): %v", tt.args, err)
			}
			if diff := cmp.Diff(tt.want, dumpRequest(t, req)); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}
