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

// firstDuplicatePairwise is the quadratic definition firstDuplicate must
// agree with: the first j with an earlier equal item i.
func firstDuplicatePairwise(x []any) (int, int, bool) {
	for j := 1; j < len(x); j++ {
		for i := range j {
			if jsonEqual(x[i], x[j]) {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

func decodeNumbers(t testing.TB, s string) []any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v []any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return v
}

func TestFirstDuplicateMatchesPairwise(t *testing.T) {
	tests := []string{
		`[1,2,3,4,5,6,7,8,9,10]`,
		`[1,2,3,4,5,6,7,8,9,1.0]`,
		`[0,1,2,3,4,5,6,7,8,-0]`,
		`[1e0,2,3,4,5,6,7,8,9,1]`,
		`[9007199254740993,1,2,3,4,5,6,7,8,9007199254740992]`,
		`[1e400,1,2,3,4,5,6,7,8,1e400]`,
		`[1e400,1,2,3,4,5,6,7,8,10e399]`,
		`["a","b","c","d","e","f","g","h","i","a"]`,
		`["1",1,true,null,"true","null",[1],{"a":1},[],{}]`,
		`[{"a":1,"b":[1,2]},2,3,4,5,6,7,8,9,{"b":[1,2.0],"a":1}]`,
		`[{"a":1,"b":[1,2]},2,3,4,5,6,7,8,9,{"b":[2,1],"a":1}]`,
		`[[1,"a"],2,3,4,5,6,7,8,9,["a",1]]`,
		`["a\"b",2,3,4,5,6,7,8,9,"a\u0022b"]`,
		`[1,2,3,4,5,6,7,8,9,10,2,3]`,
		`[1,2,1]`,
		`[]`,
	}
	for _, s := range tests {
		x := decodeNumbers(t, s)
		gi, gj, gdup := firstDuplicate(x)
		wi, wj, wdup := firstDuplicatePairwise(x)
		if gi != wi || gj != wj || gdup != wdup {
			t.Errorf("firstDuplicate(%s) = %d, %d, %v; pairwise %d, %d, %v", s, gi, gj, gdup, wi, wj, wdup)
		}
	}
}

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
