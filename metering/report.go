package metering

import (
	"strconv"
	"strings"
	"time"
)

// Report is a key's usage under a plan at one instant, as GET /usage and
// `restmcp usage` show it. Times are UTC.
type Report struct {
	// KeyID is the key the report is about.
	KeyID string `json:"key_id"`
	// Plan names the plan whose limits the report applies.
	Plan string `json:"plan"`
	// Time is when the counters were read: Redis TIME for RedisMeter.
	Time time.Time `json:"time"`
	// RateLimits has one entry per rate limit of the plan, in its order.
	RateLimits []RateUsage `json:"rate_limits"`
	// Periods has the current day, then the current month, whether or not
	// the plan has a quota for them.
	Periods []PeriodUsage `json:"periods"`
}

// RateUsage is the state of one rate limit.
type RateUsage struct {
	// Name is the limit's name (LimitPerSecond, …).
	Name string `json:"name"`
	// Limit is the number of calls per Window, also the burst.
	Limit int64 `json:"limit"`
	// Window is the limit's window, in seconds in JSON.
	Window time.Duration `json:"-"`
	// WindowSeconds is Window in seconds, for JSON.
	WindowSeconds float64 `json:"window_seconds"`
	// Remaining is the number of calls that would be admitted right now.
	Remaining int64 `json:"remaining"`
	// Reset is when the limit will have fully recovered (Remaining =
	// Limit); Time when it already has.
	Reset time.Time `json:"reset"`
}

// PeriodUsage is the usage of one calendar period (UTC).
type PeriodUsage struct {
	// Period is PeriodDay or PeriodMonth.
	Period Period `json:"period"`
	// Name is the period as in its Redis key: "yyyymmdd" or "yyyymm".
	Name string `json:"name"`
	// Start is the period's first instant.
	Start time.Time `json:"start"`
	// Reset is the period's end, when its counters start again from zero.
	Reset time.Time `json:"reset"`
	// Used is the number of cost units admitted in the period (net of
	// refunds).
	Used int64 `json:"used"`
	// Limit is the plan's quota for the period; -1 when it has none.
	Limit int64 `json:"limit"`
	// Remaining is Limit - Used, at least 0; -1 when there is no quota.
	Remaining int64 `json:"remaining"`
	// Tools maps each tool called in the period to its calls and units.
	// Kept for the month only: nil for the day.
	Tools map[string]ToolUsage `json:"tools,omitempty"`
	// APIs sums Tools by API when several documents are served on one
	// endpoint (Report.SplitByAPI; docs/apis.md): "checkout" → the calls
	// and units of the checkout_* tools. A tool no longer served is under
	// NotServedAPI. Nil for one document, and for the day.
	APIs map[string]ToolUsage `json:"apis,omitempty"`
}

// NotServedAPI is the PeriodUsage.APIs entry of tools the server no
// longer serves (removed by a reload), whose API it cannot tell.
const NotServedAPI = "(not served)"

// SplitByAPI fills the APIs of every period that has Tools, apiOf naming
// each tool's API ("" when the tool is not served).
func (r *Report) SplitByAPI(apiOf func(tool string) string) {
	for i := range r.Periods {
		p := &r.Periods[i]
		if p.Tools == nil {
			continue
		}
		p.APIs = map[string]ToolUsage{}
		for tool, u := range p.Tools {
			api := apiOf(tool)
			if api == "" {
				api = NotServedAPI
			}
			sum := p.APIs[api]
			sum.Calls += u.Calls
			sum.Cost += u.Cost
			p.APIs[api] = sum
		}
	}
}

// ToolUsage counts one tool's admitted calls (net of refunds) and their
// cost units in a period.
type ToolUsage struct {
	// Calls is the number of admitted calls.
	Calls int64 `json:"calls"`
	// Cost is the number of cost units they were charged.
	Cost int64 `json:"cost"`
}

// buildReport assembles a Report from what a store read: the state before
// a hypothetical call, and the month's per-tool hash (fields
// "calls:<tool>" and "cost:<tool>").
func buildReport(keyID string, plan *Plan, s callState, tools map[string]int64) Report {
	now := time.UnixMicro(s.now).UTC()
	r := Report{KeyID: keyID, Plan: plan.Name, Time: now, RateLimits: []RateUsage{}}
	for i, rl := range plan.RateLimits {
		u := RateUsage{
			Name:          rl.Name,
			Limit:         rl.Limit,
			Window:        rl.Window,
			WindowSeconds: rl.Window.Seconds(),
			Remaining:     (rl.p.tau - s.rel[i]) / rl.p.interval,
			Reset:         now.Add(micros(s.rel[i])),
		}
		if rl.Sliding {
			// rel is the calls in the window, aux when the oldest leaves it.
			u.Remaining, u.Reset = max(rl.Limit-s.rel[i], 0), now.Add(micros(s.aux[i]))
		}
		r.RateLimits = append(r.RateLimits, u)
	}
	day := PeriodUsage{Period: PeriodDay, Name: dayPeriod(now), Start: dayStart(now, 0), Reset: dayStart(now, 1), Used: s.dayUsed}
	month := PeriodUsage{Period: PeriodMonth, Name: period(now), Start: monthStart(now, 0), Reset: monthStart(now, 1), Used: s.monthUsed}
	for _, p := range []*PeriodUsage{&day, &month} {
		p.Limit, p.Remaining = plan.quota(p.Period), -1
		if p.Limit >= 0 {
			p.Remaining = max(p.Limit-p.Used, 0)
		}
	}
	month.Tools = make(map[string]ToolUsage)
	for field, v := range tools {
		kind, tool, ok := strings.Cut(field, ":")
		if !ok {
			continue
		}
		u := month.Tools[tool]
		switch kind {
		case "calls":
			u.Calls = v
		case "cost":
			u.Cost = v
		default:
			continue
		}
		month.Tools[tool] = u
	}
	r.Periods = []PeriodUsage{day, month}
	return r
}

// parseHash turns HGETALL's flat field/value list into integers; values
// that are not integers are skipped.
func parseHash(flat []any) map[string]int64 {
	m := make(map[string]int64, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		f, _ := flat[i].(string)
		v, _ := flat[i+1].(string)
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			m[f] = n
		}
	}
	return m
}

// Standing is what the RateLimit headers of an answer that counted nothing
// (a tools/call of a name that is not a tool) say about the caller: the
// limit of r with the fewest calls or units remaining right now, among
// equals the one with the longer Reset, as decide picks it for an allowed
// call. Limit is 0 and Policy "" when the plan has no limit.
func (r Report) Standing() Decision {
	d := Decision{Allowed: true, Plan: r.Plan, At: r.Time}
	found := false
	consider := func(name string, limit, remaining int64, reset time.Time, window time.Duration) {
		left := max(reset.Sub(r.Time), 0)
		if !found || remaining < d.Remaining || (remaining == d.Remaining && left > d.Reset) {
			d.Policy, d.Limit, d.Remaining, d.Reset, d.Window = name, limit, remaining, left, window
			found = true
		}
	}
	for _, rl := range r.RateLimits {
		consider(rl.Name, rl.Limit, rl.Remaining, rl.Reset, rl.Window)
	}
	for _, p := range r.Periods {
		if p.Limit < 0 {
			continue
		}
		name := QuotaDay
		if p.Period == PeriodMonth {
			name = QuotaMonth
		}
		consider(name, p.Limit, p.Remaining, p.Reset, p.Reset.Sub(p.Start))
	}
	for _, p := range r.Periods {
		if p.Period == PeriodMonth {
			d.Count = p.Used
		}
	}
	return d
}
