package config

import (
	"fmt"
	"io"
	"log/slog"
)

// redacted is what a Secret prints as, wherever it is printed.
const redacted = "REDACTED"

// Secret is a string that must never reach logs or error messages, such as a
// Redis URL with a password in it. fmt, log/slog, encoding/json and
// encoding.TextMarshaler users all print it as "REDACTED"; use string(s) to get
// the value where it is really needed (for example redis.ParseURL).
type Secret string

// String returns "REDACTED", so %v and %s never print the value.
func (Secret) String() string { return redacted }

// GoString returns "REDACTED", so %#v never prints the value either.
func (Secret) GoString() string { return redacted }

// Format prints "REDACTED" for every verb (quoted for %q). Without it, verbs
// that do not call String, such as %d, would print the value.
func (Secret) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		_, _ = io.WriteString(f, `"`+redacted+`"`)
		return
	}
	_, _ = io.WriteString(f, redacted)
}

// LogValue returns "REDACTED", so slog never prints the value.
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText returns "REDACTED", so encoding/json, YAML and slog's JSON
// handler never print the value when a Config is serialized.
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
