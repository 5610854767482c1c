package openapi

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var updateFingerprints = flag.Bool("update-fingerprints", false, "rewrite testdata/fingerprints/*.txt from the current output")

// fingerprint summarizes everything a document's tools put on the wire
// and upstream: per tool its name, method, path, server, title,
// description, annotations, cost, input and output schema, hashed in N6
// order; plus the tool count and the largest schemas. Any change in the
// conversion of any corpus document changes it.
func fingerprint(d *Document) string {
	h := sha256.New()
	maxIn, maxOut := 0, 0
	for _, t := range d.Tools {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%v%v%v%v\x00%d\x00%s\x00%s\x00",
			t.Name, t.Method, t.PathTemplate, t.ServerURL, t.Title, t.Description,
			t.ReadOnly, t.Destructive, t.Idempotent, t.RequiresCredential, t.Cost,
			string(t.InputSchema), string(t.OutputSchema))
		maxIn, maxOut = max(maxIn, len(t.InputSchema)), max(maxOut, len(t.OutputSchema))
	}
	return fmt.Sprintf("tools %d\nlargest inputSchema %d bytes\nlargest outputSchema %d bytes\nsha256 %s\n",
		len(d.Tools), maxIn, maxOut, hex.EncodeToString(h.Sum(nil)))
}

// checkFingerprint compares d's fingerprint with
// testdata/fingerprints/<folder>.txt; -update-fingerprints rewrites it.
// Performance work on loading and conversion must leave it unchanged.
func checkFingerprint(t *testing.T, folder string, d *Document) {
	t.Helper()
	got := fingerprint(d)
	golden := filepath.Join("testdata", "fingerprints", folder+".txt")
	if *updateFingerprints {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestCorpusAll -update-fingerprints to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s: tools changed:\ngot:\n%swant:\n%s", folder, got, want)
	}
}
