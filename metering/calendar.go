package metering

import (
	"strings"
	"time"
)

// calendar is what every admission of one UTC day shares: the boundaries
// of the candidate days and months (the day before, the day, the day
// after; the same for months), as numbers and as the script's arguments,
// and the names of their counters' periods. It is made once a day instead
// of once a call (calendar arithmetic, formatting and boxing cost more than
// the rest of an admission's arguments together).
type calendar struct {
	from, to time.Time // the day it is for: [from, to)
	// args are the candidates' boundaries, µs since the epoch, boxed once
	// as script arguments: the days' four, then the months' (candidate i
	// holds [args[i], args[i+1]) of its kind).
	args [8]any
	// dayNames and monthNames are the candidates' period names,
	// "usage:yyyymmdd", "usage:yyyymm", and toolNames "tools:yyyymm".
	dayNames, monthNames, toolNames [3]string
}

// newCalendar is the calendar of the UTC day containing t.
func newCalendar(t time.Time) *calendar {
	c := &calendar{from: dayStart(t, 0), to: dayStart(t, 1)}
	for i := range 4 {
		day, month := dayStart(t, i-1), monthStart(t, i-1)
		c.args[i], c.args[4+i] = day.UnixMicro(), month.UnixMicro()
		if i < 3 {
			c.dayNames[i] = "usage:" + dayPeriod(day)
			c.monthNames[i] = "usage:" + period(month)
			c.toolNames[i] = "tools:" + period(month)
		}
	}
	return c
}

// calendarAt returns the calendar of t's UTC day, made anew when the day
// has changed since the last one (or the clock went back).
func (m *RedisMeter) calendarAt(t time.Time) *calendar {
	if c := m.cal.Load(); c != nil && !t.Before(c.from) && t.Before(c.to) {
		return c
	}
	c := newCalendar(t)
	m.cal.Store(c)
	return c
}

// planKeys returns the keys of planAdmitScript and planReportScript for
// keyID under plan (each rate limit's, then the candidate days', months'
// and per-tool hashes'), cut from one string, and the calendar of the
// replica's day.
func (m *RedisMeter) planKeys(keyID string, plan *Plan) ([]string, *calendar) {
	cal := m.calendarAt(m.replicaNow())
	keys := make([]string, len(plan.RateLimits)+9)
	periods := []*[3]string{&cal.dayNames, &cal.monthNames, &cal.toolNames}
	size := 0
	for _, rl := range plan.RateLimits {
		size += keySize(keyID, "rl", rl.tag)
	}
	for _, names := range periods {
		for _, name := range names {
			size += keySize(keyID, name)
		}
	}
	var b strings.Builder
	b.Grow(size)
	var small [16]int
	ends := small[:0]
	for _, rl := range plan.RateLimits {
		writeKey(&b, keyID, "rl", rl.tag)
		ends = append(ends, b.Len())
	}
	for _, names := range periods {
		for _, name := range names {
			writeKey(&b, keyID, name)
			ends = append(ends, b.Len())
		}
	}
	all := b.String() // no copy: every key below is a part of it
	start := 0
	for i, end := range ends {
		keys[i], start = all[start:end], end
	}
	return keys, cal
}
