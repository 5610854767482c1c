package metering

import (
	"strings"
	"time"
)

// calendar is what every admission of one UTC month shares: the
// boundaries of the candidate months (the month before, the month, the
// month after) as the scripts' arguments, and the names of their month
// hashes. It is made once a month instead of once a call (calendar
// arithmetic, formatting and boxing cost more than the rest of an
// admission's arguments together).
type calendar struct {
	from, to time.Time // the month it is for: [from, to)
	// args are the candidates' boundaries, µs since the epoch, boxed once
	// as script arguments: candidate i holds [args[i], args[i+1]).
	args [4]any
	// monthNames are the candidates' month hashes' names, "month:yyyymm".
	monthNames [3]string
}

// newCalendar is the calendar of the UTC month containing t.
func newCalendar(t time.Time) *calendar {
	c := &calendar{from: monthStart(t, 0), to: monthStart(t, 1)}
	for i := range 4 {
		month := monthStart(t, i-1)
		c.args[i] = month.UnixMicro()
		if i < 3 {
			c.monthNames[i] = monthHash + period(month)
		}
	}
	return c
}

// calendarAt returns the calendar of t's UTC month, made anew when the
// month has changed since the last one (or the clock went back).
func (m *RedisMeter) calendarAt(t time.Time) *calendar {
	if c := m.cal.Load(); c != nil && !t.Before(c.from) && t.Before(c.to) {
		return c
	}
	c := newCalendar(t)
	m.cal.Store(c)
	return c
}

// planKeys returns the keys of planAdmitScript and planReportScript for
// keyID under plan (the candidate months' hashes, then each sliding
// log's), cut from one string, and the calendar of the replica's month.
func (m *RedisMeter) planKeys(keyID string, plan *Plan) ([]string, *calendar) {
	cal := m.calendarAt(m.replicaNow())
	size, count := 0, len(cal.monthNames)
	for _, name := range cal.monthNames {
		size += keySize(keyID, name)
	}
	for _, rl := range plan.RateLimits {
		if rl.Sliding {
			size += keySize(keyID, "rl", rl.tag)
			count++
		}
	}
	var b strings.Builder
	b.Grow(size)
	var small [16]int
	ends := small[:0]
	for _, name := range cal.monthNames {
		writeKey(&b, keyID, name)
		ends = append(ends, b.Len())
	}
	for _, rl := range plan.RateLimits {
		if rl.Sliding {
			writeKey(&b, keyID, "rl", rl.tag)
			ends = append(ends, b.Len())
		}
	}
	all := b.String() // no copy: every key below is a part of it
	keys := make([]string, count)
	start := 0
	for i, end := range ends {
		keys[i], start = all[start:end], end
	}
	return keys, cal
}
