package openapi

import (
	"context"
	"encoding/json"
	"testing"
)

// placeholderDoc has an expandable field, customer (a string id, or the
// Customer object), two levels down in a request body and a response.
const placeholderDoc = `openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://upstream.test"}]
components:
  schemas:
    Customer:
      type: object
      properties:
        id: {type: string}
        name: {type: string, description: "The customer's full name, as printed on invoices and receipts."}
        email: {type: string, description: "Where invoices are sent; also the login of the customer portal."}
        address: {type: object, properties: {line1: {type: string}, city: {type: string}, country: {type: string}}}
    Charge:
      type: object
      properties:
        id: {type: string}
        customer:
          anyOf:
            - {type: string, maxLength: 5000}
            - {$ref: '#/components/schemas/Customer'}
paths:
  /charges:
    post:
      operationId: createCharge
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                charge: {$ref: '#/components/schemas/Charge'}
      responses:
        "200":
          description: OK
          content:
            application/json:
              schema:
                type: object
                properties:
                  charge: {$ref: '#/components/schemas/Charge'}
`

// TestS2PlaceholdersKeepWhatTheyReplace: when the schema budget cuts an
// expandable field, the input placeholder still takes the string id beside
// a JSON object, and the output placeholder has no type at all (R8), so
// neither refuses what the API sends or takes.
func TestS2PlaceholdersKeepWhatTheyReplace(t *testing.T) {
	d, err := LoadData(context.Background(), []byte(placeholderDoc), "", LoadOptions{SchemaBudget: 300, OutputSchemaBudget: 400})
	if err != nil {
		t.Fatal(err)
	}
	tl := d.Tools[0]
	var in struct {
		Properties struct {
			Charge struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"charge"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tl.InputSchema, &in); err != nil {
		t.Fatal(err)
	}
	if got, want := string(in.Properties.Charge.Properties["customer"]), `{"anyOf":[{"type":"string"},{"type":"object","description":"customer: nested structure omitted; pass it as a JSON object"}]}`; got != want {
		t.Errorf("input customer = %s\nwant %s", got, want)
	}
	if got, want := string(tl.OutputSchema), `{"type":"object","properties":{"charge":{"anyOf":[{"type":"object","properties":{"id":{"anyOf":[{"type":"string"},{"type":"null"}]},"customer":{"description":"customer: nested structure omitted; the text content has the whole response"}}},{"type":"null"}]}}}`; got != want {
		t.Errorf("output schema = %s\nwant %s", got, want)
	}
	if _, err := tl.NewRequest(context.Background(), json.RawMessage(`{"charge":{"customer":"cus_123"}}`), ""); err != nil {
		t.Errorf("a string id for the cut field: %v", err)
	}
	got := tl.ConformStructured(map[string]any{"charge": map[string]any{"id": "ch_1", "customer": "cus_123"}})
	if c, _ := got["charge"].(map[string]any); c["customer"] != "cus_123" {
		t.Errorf("ConformStructured = %v, want the string id kept", got)
	}
}
