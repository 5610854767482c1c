package metering

import (
	"context"
	"time"
)

// Decision is the outcome of one admission.
type Decision struct {
	Allowed    bool
	Limit      int64         // calls allowed per window
	Remaining  int64         // calls left in the window after this one (0 when refused)
	Reset      time.Duration // until the window has fully recovered
	RetryAfter time.Duration // >0 only when refused: until the next call would be admitted
	Count      int64         // the key's counter for the current period after this call
}

// Meter admits or refuses one tools/call for a key, counting admitted calls.
type Meter interface {
	// Admit checks the key's rate limit and, when allowed, counts the call,
	// atomically. keyID is a short hash of the key, never the key itself.
	Admit(ctx context.Context, keyID string) (Decision, error)
}
