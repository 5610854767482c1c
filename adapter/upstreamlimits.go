package adapter

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// upstreamLimit is what an upstream's error answer says about its rate
// limit, from whichever headers it sends: Retry-After (RFC 9110 §10.2.3),
// the IETF RateLimit / RateLimit-Policy fields
// (https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/),
// the older RateLimit-Limit / -Remaining / -Reset, and X-RateLimit-*
// (GitHub's reset is a Unix time, others' a number of seconds). A value
// is -1 when no header gave it.
type upstreamLimit struct {
	retryAfter int64 // seconds until a retry may succeed
	remaining  int64 // calls left in the window
	limit      int64 // calls per window
	reset      int64 // seconds until the window resets
}

// readUpstreamLimit reads h at now. limited reports whether the answer is
// a rate limit: a 429, or a 403 or 503 that sends Retry-After or says no
// call is left.
func readUpstreamLimit(status int, h http.Header, now time.Time) (l upstreamLimit, limited bool) {
	l = upstreamLimit{retryAfter: retryAfterSeconds(h, now), remaining: -1, limit: -1, reset: -1}
	// The structured field (draft 07 on): items "policy";r=<remaining>;t=<seconds>;
	// the one with the fewest calls left describes the caller.
	if v := h.Get("RateLimit"); v != "" {
		for _, item := range strings.Split(v, ",") {
			r, t := paramInt(item, "r"), paramInt(item, "t")
			if r < 0 { // the draft-03 form: limit=, remaining=, reset=
				r, t = paramInt(item, "remaining"), paramInt(item, "reset")
				if n := paramInt(item, "limit"); n >= 0 {
					l.limit = n
				}
			}
			if r >= 0 && (l.remaining < 0 || r < l.remaining) {
				l.remaining, l.reset = r, t
			}
		}
	}
	if v := h.Get("RateLimit-Policy"); v != "" && l.limit < 0 {
		if q := paramInt(v, "q"); q >= 0 {
			l.limit = q
		} else if n, err := strconv.ParseInt(strings.TrimSpace(strings.Split(strings.Split(v, ",")[0], ";")[0]), 10, 64); err == nil {
			l.limit = n // the older form: 100;w=60
		}
	}
	for _, prefix := range []string{"RateLimit-", "X-RateLimit-"} {
		if l.remaining < 0 {
			l.remaining = headerInt(h, prefix+"Remaining")
		}
		if l.limit < 0 {
			l.limit = headerInt(h, prefix+"Limit")
		}
		if l.reset < 0 {
			if r := headerInt(h, prefix+"Reset"); r > 1_000_000_000 {
				l.reset = max(0, r-now.Unix()) // a Unix time (GitHub)
			} else {
				l.reset = r
			}
		}
	}
	switch status {
	case http.StatusTooManyRequests:
		limited = true
	case http.StatusForbidden, http.StatusServiceUnavailable:
		limited = l.retryAfter >= 0 || l.remaining == 0
	}
	if limited && l.retryAfter < 0 && l.remaining == 0 && l.reset >= 0 {
		l.retryAfter = l.reset
	}
	return l, limited
}

// line is the sentence a model acts on: "rate limited by the API: retry
// after 42 s (0 of 5000 calls left; the limit resets in 42 s)".
func (l upstreamLimit) line() string {
	var b strings.Builder
	b.WriteString("rate limited by the API: ")
	if l.retryAfter >= 0 {
		b.WriteString("retry after " + strconv.FormatInt(l.retryAfter, 10) + " s")
	} else {
		b.WriteString("it did not say when to retry; wait before calling again")
	}
	var parts []string
	switch {
	case l.remaining >= 0 && l.limit >= 0:
		parts = append(parts, strconv.FormatInt(l.remaining, 10)+" of "+strconv.FormatInt(l.limit, 10)+" calls left")
	case l.remaining >= 0:
		parts = append(parts, strconv.FormatInt(l.remaining, 10)+" calls left")
	}
	if l.reset >= 0 {
		parts = append(parts, "the limit resets in "+strconv.FormatInt(l.reset, 10)+" s")
	}
	if len(parts) > 0 {
		b.WriteString(" (" + strings.Join(parts, "; ") + ")")
	}
	return b.String()
}

// object is l as structuredContent's "rate_limit" member: the values known,
// in seconds and calls.
func (l upstreamLimit) object() map[string]any {
	m := map[string]any{}
	for k, v := range map[string]int64{"retry_after_seconds": l.retryAfter, "remaining": l.remaining, "limit": l.limit, "reset_seconds": l.reset} {
		if v >= 0 {
			m[k] = v
		}
	}
	return map[string]any{"rate_limit": m}
}

// retryAfterSeconds is h's Retry-After (RFC 9110 §10.2.3: a number of
// seconds, or an HTTP date) as whole seconds from now, at least 0; -1 when
// it is absent or unreadable.
func retryAfterSeconds(h http.Header, now time.Time) int64 {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return -1
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return n
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, int64(math.Ceil(t.Sub(now).Seconds())))
	}
	return -1
}

// headerInt is h's field name as a whole number ≥ 0, or -1.
func headerInt(h http.Header, name string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(h.Get(name)), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// paramInt is the whole-number parameter key of a structured-field item
// or a "key=value" list ("…;r=50;t=30", "limit=100, remaining=0"), or -1.
func paramInt(item, key string) int64 {
	for _, p := range strings.FieldsFunc(item, func(r rune) bool { return r == ';' || r == ',' }) {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), key) {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err == nil && n >= 0 {
			return n
		}
	}
	return -1
}
