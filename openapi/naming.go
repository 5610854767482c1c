package openapi

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/iancoleman/strcase"
)

// minNameLength is the smallest usable MaxNameLength: N5 needs room for
// "_" plus 8 hex characters and at least one character of prefix.
const minNameLength = 10

// baseName returns the N1 base of an operation: its operationId, or
// "<method in lower case> <path>" when the operationId is missing or blank.
func baseName(operationID, method, path string) string {
	if strings.TrimSpace(operationID) != "" {
		return operationID
	}
	return fallbackBase(method, path)
}

func fallbackBase(method, path string) string {
	return strings.ToLower(method) + " " + path
}

// ToolName returns the tool name of one operation
// (de-duplication of equal names is applied by Load across the document):
// strcase.ToSnake of the operationId (or of "<method> <path>" with braces
// removed when it is blank), every byte outside [A-Za-z0-9_-] replaced by
// "_", runs of "_" collapsed, leading/trailing "_" trimmed, the N4 fallback
// when that leaves nothing, and the N5 cap: names longer than max keep
// their first max−9 characters (trailing "_" trimmed) plus "_" and the first
// 8 hex characters of sha256(base), after N7 has prefixed "op_" to a name
// whose first character is not a letter. max ≤ 0 means DefaultMaxNameLength.
// The result always matches ^[a-zA-Z0-9_-]{1,max}$.
func ToolName(operationID, method, path string, max int) string {
	return StyledToolName(operationID, method, path, max, NameSnake)
}

// Tool name styles (LoadOptions.NameStyle): how N1 turns an operationId
// into a name before N3 sanitizes it.
const (
	NameSnake = "snake" // strcase.ToSnake: etfs.topHoldings → etfs_top_holdings (the default)
	NameKebab = "kebab" // strcase.ToKebab: getAccounts → get-accounts
	NameAsIs  = "as_is" // unchanged: get-accounts stays get-accounts, etfs.topHoldings → etfs_topHoldings
)

// StyledToolName is ToolName with the N1 step of style (NameSnake,
// NameKebab or NameAsIs; "" is NameSnake).
func StyledToolName(operationID, method, path string, max int, style string) string {
	return apiToolName("", operationID, method, path, max, style)
}

// apiToolName is StyledToolName for the API named api among several served
// on one endpoint (LoadOptions.API): the name is "<api>_<N1–N4 name>"
// before N5 caps the whole of it, so the prefix is never cut; N7 is not
// needed (an API name starts with a letter). api "" is StyledToolName.
func apiToolName(api, operationID, method, path string, max int, style string) string {
	if max <= 0 {
		max = DefaultMaxNameLength
	}
	if max < minNameLength {
		max = minNameLength
	}
	base := baseName(operationID, method, path)
	name := sanitize(styled(base, base != operationID, style), false)
	if name == "" {
		base = fallbackBase(method, path)
		name = sanitize(styled(base, true, style), false)
	}
	if name == "" {
		name = "op"
	}
	switch c := name[0]; {
	case api != "":
		name = api + "_" + name
	case !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'):
		name = "op_" + name // N7: some hosts refuse a name that starts with a digit
	}
	return capLength(name, base, max)
}

func styled(base string, fallback bool, style string) string {
	if fallback {
		base = strings.NewReplacer("{", "", "}", "").Replace(base)
	}
	switch style {
	case NameKebab:
		return strcase.ToKebab(base)
	case NameAsIs:
		return base
	}
	return strcase.ToSnake(base)
}

// sanitize applies N3: bytes outside [A-Za-z0-9_-] (plus "." when
// allowDot, for P2) become "_", runs of "_" collapse, and leading and
// trailing "_" are trimmed.
func sanitize(s string, allowDot bool) string {
	var b strings.Builder
	b.Grow(len(s))
	last := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || allowDot && c == '.'
		if !ok {
			c = '_'
		}
		if c == '_' && last == '_' {
			continue
		}
		b.WriteByte(c)
		last = c
	}
	return strings.Trim(b.String(), "_")
}

// capLength applies N5.
func capLength(name, base string, max int) string {
	if len(name) <= max {
		return name
	}
	sum := sha256.Sum256([]byte(base))
	prefix := strings.TrimRight(name[:max-9], "_")
	return prefix + "_" + hex.EncodeToString(sum[:])[:8]
}

// withSuffix returns name with "_n" appended, shortening name (and
// trimming trailing "_") so that the result still fits max.
func withSuffix(name string, n, max int) string {
	suf := "_" + strconv.Itoa(n)
	if len(name)+len(suf) > max {
		name = strings.TrimRight(name[:max-len(suf)], "_")
	}
	return name + suf
}

// uniqueName returns name if it is free, else the first free "_2", "_3", …
// (N6, P2). It marks the result as taken.
func uniqueName(name string, taken map[string]bool, max int) string {
	if !taken[name] {
		taken[name] = true
		return name
	}
	for n := 2; ; n++ {
		c := withSuffix(name, n, max)
		if !taken[c] {
			taken[c] = true
			return c
		}
	}
}

// validKey reports whether s may be used unchanged as an input-schema
// property key (P1: ^[a-zA-Z0-9_.-]{1,64}$).
func validKey(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// propertyKeys maps wire names to input-schema property keys per P1–P2:
// valid names are kept and reserved first, the others are sanitized (N3
// with "." allowed, N5 with the hash over the wire name, "param" when
// empty) and de-duplicated with "_2", "_3", …. taken holds keys already
// used and is updated.
func propertyKeys(wires []string, taken map[string]bool) []string {
	keys := make([]string, len(wires))
	for i, w := range wires {
		if validKey(w) && !taken[w] {
			keys[i] = w
			taken[w] = true
		}
	}
	for i, w := range wires {
		if keys[i] != "" {
			continue
		}
		k := sanitize(w, true)
		if k == "" {
			k = "param"
		}
		k = capLength(k, w, 64)
		keys[i] = uniqueName(k, taken, 64)
	}
	return keys
}

// maxDescription is the S10 cap in force: LoadOptions.MaxDescriptionLength,
// DefaultMaxDescriptionLength when zero, none when negative.
func (b *builder) maxDescription() int {
	switch n := b.opts.MaxDescriptionLength; {
	case n == 0:
		return DefaultMaxDescriptionLength
	case n < 0:
		return -1
	default:
		return n
	}
}

// cutDescription applies S10: a description of more than max characters
// (runes) is cut at the last white space that leaves room for " …", and
// gets that marker; without white space it is cut at the limit. max < 0:
// no cap.
func cutDescription(s string, max int) string {
	if max < 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	const mark = " …"
	limit := max - utf8.RuneCountInString(mark)
	if limit < 1 {
		limit = 1
	}
	// byte offset of the limit-th rune
	end, n := len(s), 0
	for i := range s {
		if n == limit {
			end = i
			break
		}
		n++
	}
	cut := s[:end]
	if i := strings.LastIndexFunc(cut, unicode.IsSpace); i > 0 {
		cut = cut[:i]
	}
	return strings.TrimRightFunc(cut, unicode.IsSpace) + mark
}
