package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// hugeArgsTool has an array argument with uniqueItems of each item type.
func hugeArgsTool(t testing.TB) *Tool {
	t.Helper()
	d, err := LoadData(context.Background(), []byte(`openapi: 3.0.3
info: {title: huge, version: "1"}
servers: [{url: "http://upstream.test"}]
paths:
  /items:
    post:
      operationId: putItems
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                ints: {type: array, uniqueItems: true, items: {type: integer}}
                strs: {type: array, uniqueItems: true, items: {type: string}}
      responses: {"200": {description: OK}}
`), "", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d.Tools[0]
}

// hugeBodies are arguments objects of about 1 MiB: a uniqueItems array of
// integers, one of strings, and an object of distinct argument names.
func hugeBodies() map[string][]byte {
	var ints, strs, names bytes.Buffer
	ints.WriteString(`{"ints":[`)
	strs.WriteString(`{"strs":[`)
	names.WriteString(`{`)
	for i := 0; ints.Len() < 1<<20; i++ {
		if i > 0 {
			ints.WriteByte(',')
		}
		ints.WriteString(strconv.Itoa(i))
	}
	for i := 0; strs.Len() < 1<<20; i++ {
		if i > 0 {
			strs.WriteByte(',')
		}
		fmt.Fprintf(&strs, `"s%09d"`, i)
	}
	for i := 0; names.Len() < 1<<20; i++ {
		if i > 0 {
			names.WriteByte(',')
		}
		fmt.Fprintf(&names, `"n%07d":1`, i)
	}
	ints.WriteString(`]}`)
	strs.WriteString(`]}`)
	names.WriteString(`}`)
	return map[string][]byte{"unique-integers": ints.Bytes(), "unique-strings": strs.Bytes(), "argument-names": names.Bytes()}
}

// TestHugeArguments: 1 MiB arguments of each shape are checked, with the
// exact verdicts (a duplicate at the end is found; distinct names are
// unknown arguments, the first one named).
func TestHugeArguments(t *testing.T) {
	tool := hugeArgsTool(t)
	bodies := hugeBodies()
	ctx := context.Background()
	if _, err := tool.NewRequest(ctx, bodies["unique-integers"], ""); err != nil {
		t.Errorf("distinct integers: %v", err)
	}
	dup := append(bytes.TrimSuffix(bodies["unique-strings"], []byte("]}")), []byte(`,"s000000007"]}`)...)
	_, err := tool.NewRequest(ctx, dup, "")
	var ae *ArgumentError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "items 7 and ") || !strings.Contains(err.Error(), "are equal (uniqueItems)") {
		t.Errorf("duplicate string at the end: %v, want items 7 and … are equal (uniqueItems)", err)
	}
	dupNames := append(bytes.TrimSuffix(bodies["argument-names"], []byte("}")), []byte(`,"n0000003":2}`)...)
	if _, err := tool.NewRequest(ctx, dupNames, ""); err == nil || err.Error() != `invalid arguments: n0000003: given more than once` {
		t.Errorf("repeated argument name: %v, want invalid arguments: n0000003: given more than once", err)
	}
}

// BenchmarkHugeArguments checks 1 MiB arguments of each shape; "decode" is
// the cost of decoding the same body with encoding/json, the yardstick the
// checks must stay within a small multiple of.
func BenchmarkHugeArguments(b *testing.B) {
	tool := hugeArgsTool(b)
	ctx := context.Background()
	for name, body := range hugeBodies() {
		b.Run(name+"/decode", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				d := json.NewDecoder(bytes.NewReader(body))
				d.UseNumber()
				var v any
				if err := d.Decode(&v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/check", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				_, _ = tool.NewRequest(ctx, body, "")
			}
		})
	}
}
