package openapi

import (
	"context"
	"strings"
	"testing"
)

func TestExtensionCost(t *testing.T) {
	spec := func(cost string) string {
		return `openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://upstream.test/v1"}]
paths:
  /a:
    get:
      operationId: getA
` + cost + `
      responses: {"200": {description: OK}}
`
	}
	tests := []struct {
		name    string
		ext     string
		want    int64
		wantErr string
	}{
		{name: "absent", ext: "", want: 0},
		{name: "five", ext: "      x-restmcp-cost: 5", want: 5},
		{name: "zero", ext: "      x-restmcp-cost: 0", want: 0},
		{name: "negative", ext: "      x-restmcp-cost: -1", wantErr: "GET /a (#/paths/~1a/get): x-restmcp-cost: must be a non-negative whole number up to 2147483647, got -1"},
		{name: "fraction", ext: "      x-restmcp-cost: 1.5", wantErr: "x-restmcp-cost: must be a non-negative whole number up to 2147483647, got 1.5"},
		{name: "string", ext: "      x-restmcp-cost: cheap", wantErr: "x-restmcp-cost: must be a non-negative whole number, got cheap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := LoadData(context.Background(), []byte(spec(tt.ext)), "cost.yaml", LoadOptions{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := doc.Tools[0].Cost; got != tt.want {
				t.Errorf("Cost = %d, want %d", got, tt.want)
			}
		})
	}
}
