package adapter

import (
	"bufio"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var updateGoldens = flag.Bool("update-goldens", false, "rewrite the response of every testdata/wire/*.txtar from what the server answers")

// TestWireGoldens runs every testdata/wire/*.txtar: the archive's comment
// says what it protects (and where: the spec section or the issue), its
// "request" file is the HTTP request ("POST /mcp", header lines, a blank
// line, the body) and its "response" file the exact answer (the status,
// the Content-Type, a blank line, the body). Each request goes to the same
// server twice, with the fast path and with every call through the go-sdk
// (Options.DisableFastPath): both must answer exactly the golden, or, where
// the archive has a "response-sdk" file (a known difference its comment
// explains), the go-sdk must answer that. -update-goldens rewrites the
// responses from the answers.
func TestWireGoldens(t *testing.T) {
	files, err := filepath.Glob("testdata/wire/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no goldens in testdata/wire: %v", err)
	}
	up := newPlanUpstream(t)
	tools := loadTools(t, "testdata/plans_api.yaml", up.URL)
	servers := map[string]string{}
	for path, disable := range map[string]bool{"fast path": false, "go-sdk": true} {
		s, err := New(Options{Tools: tools, Keys: planKeys(), Meter: &fakeMeter{admit: allowedDecision}, DisableFastPath: disable})
		if err != nil {
			t.Fatal(err)
		}
		servers[path] = serveHandler(t, s).URL
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var request, response, sdkResponse []byte
			for _, f := range ar.Files {
				switch f.Name {
				case "request":
					request = f.Data
				case "response":
					response = f.Data
				case "response-sdk":
					sdkResponse = f.Data
				}
			}
			if request == nil || len(ar.Comment) == 0 {
				t.Fatalf("%s: needs a comment and a request", file)
			}
			answers := map[string]string{}
			for path, base := range servers {
				answers[path] = roundTrip(t, base, string(request))
			}
			if *updateGoldens {
				ar.Files = []txtar.File{{Name: "request", Data: request}, {Name: "response", Data: []byte(answers["fast path"])}}
				if answers["go-sdk"] != answers["fast path"] {
					if sdkResponse == nil {
						t.Errorf("the fast path and the go-sdk answer differently; if that is meant, add an empty response-sdk file saying why in the comment:\nfast path:\n%s\ngo-sdk:\n%s", answers["fast path"], answers["go-sdk"])
					}
					ar.Files = append(ar.Files, txtar.File{Name: "response-sdk", Data: []byte(answers["go-sdk"])})
				}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if sdkResponse == nil {
				sdkResponse = response // both paths answer the same
			}
			for path, want := range map[string][]byte{"fast path": response, "go-sdk": sdkResponse} {
				if got := answers[path]; got != string(want) {
					t.Errorf("%s (%s)\n got:\n%s\nwant:\n%s", strings.TrimSpace(string(ar.Comment)), path, got, want)
				}
			}
		})
	}
}

// roundTrip sends request (a golden's "request" file) to base and returns
// the answer in a golden's "response" form.
func roundTrip(t *testing.T, base, request string) string {
	t.Helper()
	head, body, _ := strings.Cut(request, "\n\n")
	lines := strings.Split(head, "\n")
	method, target, ok := strings.Cut(lines[0], " ")
	if !ok {
		t.Fatalf("request line %q", lines[0])
	}
	req, err := http.NewRequest(method, base+target, strings.NewReader(strings.TrimSuffix(body, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(l, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d\n", resp.StatusCode)
	for _, h := range []string{"Content-Type", "WWW-Authenticate", "Allow", "Retry-After"} {
		if v := resp.Header.Get(h); v != "" {
			fmt.Fprintf(&sb, "%s: %s\n", h, v)
		}
	}
	sb.WriteString("\n")
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		sb.WriteString(sc.Text() + "\n")
	}
	return sb.String()
}
