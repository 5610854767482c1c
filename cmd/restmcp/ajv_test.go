package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/restmcp/restmcp/internal/corpustest"
	"github.com/restmcp/restmcp/openapi"
)

var corpusRoot = corpustest.Dir()

// TestAjvCompilesEveryCorpusSchema compiles every input and output schema
// of the 23 corpus documents with ajv, as the TypeScript clients configure
// it (draft-07) and as JSON Schema 2020-12 with its meta-schema: zero
// failures, and no format ajv does not know (each would be a warning per
// schema in the client).
func TestAjvCompilesEveryCorpusSchema(t *testing.T) {
	node := requireTSClient(t)
	entries := corpustest.Entries(t)
	path := filepath.Join(t.TempDir(), "schemas.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	n := 0
	for folder, entry := range entries {
		doc, err := openapi.Load(context.Background(), filepath.Join(corpusRoot, folder, entry), openapi.LoadOptions{
			Upstream: "http://upstream.test", UpstreamHosts: []string{"*"}, Lenient: true, RefRoot: filepath.Join(corpusRoot, folder)})
		if err != nil {
			t.Fatalf("%s: %v", folder, err)
		}
		for _, tl := range doc.Tools {
			for kind, s := range map[string]json.RawMessage{"input": tl.InputSchema, "output": tl.OutputSchema} {
				if len(s) == 0 {
					continue
				}
				line, _ := json.Marshal(map[string]any{"id": folder + " " + tl.Name + " " + kind, "schema": s})
				w.Write(line)
				w.WriteByte('\n')
				n++
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "ajv-check.mjs", path)
	cmd.Dir = tsClientDir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node ajv-check.mjs: %v", err)
	}
	var got struct {
		Checked        int
		Failures       []struct{ ID, Draft, Error string }
		UnknownFormats []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Checked != n {
		t.Errorf("ajv checked %d schemas, want %d", got.Checked, n)
	}
	for i, f := range got.Failures {
		if i < 20 {
			t.Errorf("%s (%s): %s", f.ID, f.Draft, f.Error)
		}
	}
	if len(got.Failures) > 0 || len(got.UnknownFormats) > 0 {
		t.Errorf("%d of %d schemas fail to compile; unknown formats %v", len(got.Failures), n, got.UnknownFormats)
	}
	t.Logf("ajv compiled %d corpus schemas (draft-07 and 2020-12)", n)
}
