package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// costSpec has one operation whose arguments reach every exact check of
// the validator: integer and number types, bounds, multipleOf, enum,
// const, uniqueItems over numbers, strings and objects, patterns (RE2 and
// ECMA-only), and free-form values.
const costSpec = `openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://upstream.test/v1"}]
paths:
  /c:
    post:
      operationId: c
      parameters:
        - {name: n, in: query, schema: {type: integer}}
        - {name: f, in: query, schema: {type: number}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                i: {type: integer, minimum: -10, maximum: 1e300, multipleOf: 3}
                x: {type: number, exclusiveMinimum: 0.001, multipleOf: 0.25}
                e: {enum: [1, 2.5, "a", [1, 2], {k: 1}]}
                u: {type: array, uniqueItems: true, items: {}}
                s: {type: string, pattern: '^(a+)+$'}
                l: {type: string, pattern: '^(?=a)a*$'}
                o: {type: object, additionalProperties: {type: number, maximum: 5}}
                any: {}
      responses: {"200": {description: OK}}
`

// FuzzArgumentCost runs NewRequest (number bounds, type checks, schema
// validation, request building) on arbitrary arguments and checks that it
// never panics and that a refusal is an *ArgumentError. While fuzzing
// (-fuzz), it also fails any input that costs more CPU than
// costBudget(len(input)): the validator's cost must grow with the bytes a
// caller sends, never with the values they spell (1e999999). The seeds run
// in every go test; the budget, a timing, applies only under -fuzz, where
// one input runs alone.
func FuzzArgumentCost(f *testing.F) {
	for _, s := range []string{
		`{"i":3,"x":0.5,"e":2.5,"u":[1,2,3],"s":"aaa","l":"aa","o":{"a":1},"n":1,"f":1.5}`,
		`{"i":1e999999}`, `{"x":1e-999999}`, `{"u":[1e400,1e399,1E+400]}`, `{"e":1e9999}`,
		`{"n":1e401}`, `{"f":-0.000001e-400}`, `{"o":{"a":1e300,"b":2e-300}}`,
		`{"i":` + strings.Repeat("9", 401) + `}`, `{"x":0.` + strings.Repeat("1", 400) + `}`,
		`{"u":[` + strings.Repeat(`"aaaaaaaa",`, 50) + `"b"]}`,
		`{"s":"` + strings.Repeat("a", 40) + `!"}`, `{"l":"` + strings.Repeat("a", 1000) + `b"}`,
		`{"any":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}`,
	} {
		f.Add([]byte(s))
	}
	d, err := LoadData(context.Background(), []byte(costSpec), "", LoadOptions{})
	if err != nil {
		f.Fatal(err)
	}
	tool := d.Tools[0]
	fuzzing := flag.Lookup("test.fuzz").Value.String() != ""
	f.Fuzz(func(t *testing.T, args []byte) {
		runtime.LockOSThread() // threadCPU reads this thread's clock
		defer runtime.UnlockOSThread()
		start := threadCPU(t)
		_, err := tool.NewRequest(context.Background(), json.RawMessage(args), "k")
		spent := threadCPU(t) - start
		var ae *ArgumentError
		if err != nil && !errors.As(err, &ae) {
			t.Fatalf("NewRequest(%.200q): %T %v, want nil or *ArgumentError", args, err, err)
		}
		if budget := costBudget(len(args)); fuzzing && spent > budget {
			t.Fatalf("NewRequest(%.200q) cost %v of CPU for %d bytes, over the budget of %v", args, spent, len(args), budget)
		}
	})
}

// costBudget is the most CPU NewRequest may spend on n bytes of arguments
// while fuzzing: 20 ms, plus 1 µs a byte (1 MiB: about 1.07 s, the bound
// BenchmarkHostileInput reports against).
func costBudget(n int) time.Duration { return 20*time.Millisecond + time.Duration(n)*time.Microsecond }

// threadCPU is the CPU time of the calling OS thread (RUSAGE_THREAD):
// unlike the process's, it leaves out the fuzzing engine's other workers.
func threadCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
