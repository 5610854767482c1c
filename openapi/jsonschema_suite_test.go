package openapi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/restmcp/restmcp/internal/jsonvalue"
	"github.com/restmcp/restmcp/internal/testenv"
)

// suiteDir is the official JSON Schema test suite, draft 2020-12
// (https://github.com/json-schema-org/JSON-Schema-Test-Suite), shipped
// beside the repository.
var suiteDir = filepath.Join("..", "..", "shared", "json-schema-test-suite", "tests", "draft2020-12")

// suiteFiles are the suite's files for every keyword the converter emits in
// an input schema (format, default and contentEncoding are annotations, and
// their files check that they are not asserted), plus boolean schemas,
// which the converter writes as {"not":{}}.
var suiteFiles = []string{
	"type.json", "enum.json", "const.json",
	"minimum.json", "maximum.json", "exclusiveMinimum.json", "exclusiveMaximum.json", "multipleOf.json",
	"minLength.json", "maxLength.json", "pattern.json",
	"items.json", "minItems.json", "maxItems.json", "uniqueItems.json",
	"properties.json", "required.json", "additionalProperties.json",
	"anyOf.json", "not.json", "boolean_schema.json",
	"defs.json", "ref.json",
	"format.json", "default.json", "content.json",
	"optional/ecmascript-regex.json",
}

type suiteGroup struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

// suiteGroupOutOfScope reports why a group tests something restmcp's input
// schemas never contain: references outside the document ($id, anchors,
// remote or relative URIs), or the metaschema. "" when in scope.
func suiteGroupOutOfScope(g suiteGroup) string {
	s := string(g.Schema)
	for _, kw := range []string{`"$id"`, `"$anchor"`, `"$dynamicRef"`, `"$dynamicAnchor"`, `"if"`, `"then"`, `"else"`} {
		if strings.Contains(s, kw) {
			return "uses " + kw
		}
	}
	var refs []string
	for rest := s; ; {
		i := strings.Index(rest, `"$ref"`)
		if i < 0 {
			break
		}
		rest = rest[i+len(`"$ref"`):]
		rest = strings.TrimLeft(rest, ": ")
		if j := strings.IndexByte(rest[1:], '"'); strings.HasPrefix(rest, `"`) && j >= 0 {
			refs = append(refs, rest[1:1+j])
		}
	}
	for _, r := range refs {
		if !strings.HasPrefix(r, "#") {
			return "refers to " + r
		}
	}
	return ""
}

// TestJSONSchemaTestSuite runs the suite's cases for the keywords restmcp
// emits through restmcp's argument validator (the same compiler options,
// pattern engine and error mapping as a tools/call): every verdict must be
// the suite's, and every refusal must have a reason, including the optional
// ECMA-262 regex cases (\s and \S are rewritten for RE2, see
// ecmaWhitespace).
func TestJSONSchemaTestSuite(t *testing.T) {
	if _, err := os.Stat(suiteDir); err != nil {
		msg := "!!! SKIPPING: the JSON Schema test suite is not at " + suiteDir + " (beside the repository); the validator was NOT checked against it"
		testenv.Unavailable(t, "RESTMCP_REQUIRE_CORPUS", "the JSON Schema test suite", msg)
	}
	ran, outOfScope := 0, 0
	for _, file := range suiteFiles {
		data, err := os.ReadFile(filepath.Join(suiteDir, file))
		if err != nil {
			t.Fatal(err)
		}
		var groups []suiteGroup
		if err := json.Unmarshal(data, &groups); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for gi, g := range groups {
			if why := suiteGroupOutOfScope(g); why != "" {
				outOfScope += len(g.Tests)
				continue
			}
			doc, err := jsonvalue.Parse(g.Schema)
			if err != nil {
				t.Fatalf("%s %q: schema: %v", file, g.Description, err)
			}
			a := compileArgSchema(newSchemaCompiler(), "urn:suite:"+strconv.Itoa(gi), doc)
			if a.err != nil {
				t.Errorf("%s %q: %v", file, g.Description, a.err)
				continue
			}
			for _, tc := range g.Tests {
				ran++
				v, err := jsonvalue.Parse(tc.Data)
				if err != nil {
					t.Fatalf("%s %q / %q: data: %v", file, g.Description, tc.Description, err)
				}
				err = a.validate(v)
				name := file + ": " + g.Description + " / " + tc.Description
				switch {
				case tc.Valid && err != nil:
					t.Errorf("%s: refused (%v), the suite says valid", name, err)
				case !tc.Valid && err == nil:
					t.Errorf("%s: accepted, the suite says invalid", name)
				case err != nil && err.Error() == "":
					t.Errorf("%s: refused without a reason", name)
				}
			}
		}
	}
	t.Logf("%d suite cases run, %d out of scope (references outside the document)", ran, outOfScope)
	if ran < 500 {
		t.Errorf("only %d suite cases ran; the suite files moved?", ran)
	}
}

// TestECMAPatterns checks the pattern engine: \s and \S with ECMA-262's
// meaning in RE2, ECMA-only syntax on regexp2, and a backtracking pattern
// that a crafted value would keep busy for far longer than patternTimeout,
// refused instead.
func TestECMAPatterns(t *testing.T) {
	tests := []struct {
		pattern, value string
		match          bool
	}{
		{`^\s$`, "\u00a0", true},
		{`^\S$`, "\u2003", false},
		{`^[\s\d]+$`, "1\u30002", true},
		{`^\\s$`, `\s`, true}, // an escaped backslash, then a literal s
		{`^[^\S]$`, "\u00a0", true},
		{`^[^\S]$`, "x", false},
		{`^(?!admin)[a-z]+$`, "admin", false},
		{`^(?!admin)[a-z]+$`, "alice", true},
		{`^(a)\1$`, "aa", true},
		{`^((a+)+)(?!x)$`, strings.Repeat("a", 40) + "!", false},
	}
	for _, tt := range tests {
		re, err := compilePattern(tt.pattern)
		if err != nil {
			t.Errorf("compilePattern(%q): %v", tt.pattern, err)
			continue
		}
		if got := re.MatchString(tt.value); got != tt.match {
			t.Errorf("%q matches %q: %v, want %v", tt.pattern, tt.value, got, tt.match)
		}
		if re.String() != tt.pattern {
			t.Errorf("String() = %q, want the document's pattern %q", re.String(), tt.pattern)
		}
	}
	if _, err := compilePattern(`(`); err == nil || !strings.Contains(err.Error(), "not an ECMA-262 regular expression") {
		t.Errorf("compilePattern(\"(\"): %v, want an error", err)
	}
}
