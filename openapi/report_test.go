package openapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReport(t *testing.T) {
	d, err := loadSelect(t, selectSpec, LoadOptions{Select: Selection{Names: map[string]string{"createPet": "list_users"}}})
	if err != nil {
		t.Fatal(err)
	}
	r := d.Report(ReportOptions{})

	// ListBytes is the size of {"tools":[…]} with each tool marshalled
	// the way tools/list sends it.
	var tools []any
	for _, tl := range d.Tools {
		m := map[string]any{"name": tl.Name, "description": tl.Description, "inputSchema": json.RawMessage(tl.InputSchema),
			"annotations": map[string]bool{"readOnlyHint": tl.ReadOnly, "destructiveHint": tl.Destructive, "idempotentHint": tl.Idempotent}}
		if tl.Title != "" {
			m["title"] = tl.Title
		}
		if len(tl.OutputSchema) > 0 {
			m["outputSchema"] = json.RawMessage(tl.OutputSchema)
		}
		tools = append(tools, m)
	}
	list, _ := json.Marshal(map[string]any{"tools": tools})
	want := Report{
		Tools:         9,
		ListBytes:     len(list),
		TokenEstimate: len(list) / 4,
		LongestNames:  []string{"admin_list_users", "list_users_2", "list_users_3", "admin_purge", "delete_pet"},
		Collisions: []Collision{
			{Tool: "list_users_2", Wanted: "list_users", OperationID: "listUsers", Method: "GET", Path: "/users"},
			{Tool: "list_users_3", Wanted: "list_users", OperationID: "list-users", Method: "GET", Path: "/v2/users"},
		},
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Report (-want +got):\n%s", diff)
	}

	var sb strings.Builder
	if err := r.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	wantText := fmt.Sprintf(`tools: 9
tools/list bytes: %d (about %d tokens at 4 bytes per token)
longest names: admin_list_users (16) list_users_2 (12) list_users_3 (12) admin_purge (11) delete_pet (10)
collisions: 2
  list_users_2 (wanted list_users): GET /users (listUsers)
  list_users_3 (wanted list_users): GET /v2/users (list-users)
`, len(list), len(list)/4)
	if diff := cmp.Diff(wantText, sb.String()); diff != "" {
		t.Errorf("WriteText (-want +got):\n%s", diff)
	}
}

func TestReportThresholds(t *testing.T) {
	d, err := loadSelect(t, selectSpec, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bytes := d.Report(ReportOptions{}).ListBytes
	tests := []struct {
		name string
		opts ReportOptions
		want []string // warning prefixes
	}{
		{"defaults: small document", ReportOptions{}, nil},
		{"at the thresholds", ReportOptions{MaxTools: 9, MaxListBytes: bytes}, nil},
		{"too many tools", ReportOptions{MaxTools: 8}, []string{"9 tools is more than 8"}},
		{"too many bytes", ReportOptions{MaxListBytes: bytes - 1}, []string{fmt.Sprintf("tools/list is %d bytes", bytes)}},
		{"both", ReportOptions{MaxTools: 1, MaxListBytes: 1}, []string{"9 tools", "tools/list is"}},
		{"disabled", ReportOptions{MaxTools: -1, MaxListBytes: -1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := d.Report(tt.opts)
			if len(r.Warnings) != len(tt.want) {
				t.Fatalf("warnings = %q, want %d", r.Warnings, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(r.Warnings[i], w) {
					t.Errorf("warning %d = %q, want prefix %q", i, r.Warnings[i], w)
				}
			}
		})
	}
	var sb strings.Builder
	_ = d.Report(ReportOptions{MaxTools: 1}).WriteText(&sb)
	if !strings.Contains(sb.String(), "\nwarning: 9 tools is more than 1") {
		t.Errorf("WriteText does not print the warning:\n%s", sb.String())
	}
}

func TestReportEmpty(t *testing.T) {
	r := (&Document{}).Report(ReportOptions{})
	want := Report{ListBytes: len(`{"tools":[]}`), TokenEstimate: 3, LongestNames: []string{}}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Report (-want +got):\n%s", diff)
	}
}
