package adapter

import (
	"sync"
	"time"
)

// Caps on what a caller can hold open (docs/security.md H31). Sessions and
// streams cost memory and goroutines for as long as they live, and
// initialize needs no key: without a cap, 20,000 keyless initializes made
// 20,000 sessions kept 30 minutes, one session held 300 streams and 500
// keyless legacy SSE streams stayed open. Each cap is counted by this
// replica (sessions it created and has not seen end; streams it holds),
// per client address (an IPv6 address by its /64, as AddressKeyID groups
// it; the address behind a trusted proxy) and in total.

// Defaults of the caps (Options; 0 means the default, negative means none).
const (
	DefaultMaxSessions                = 10_000
	DefaultMaxSessionsPerAddress      = 100
	DefaultMaxStreamsPerSession       = 4
	DefaultMaxLegacyStreamsPerAddress = 16
)

// sessionCounts tracks the live sessions this replica created, by client
// address group, with the expiry it last gave each.
type sessionCounts struct {
	mu      sync.Mutex
	byAddr  map[string]map[string]time.Time // address group → session id → expiry
	total   int
	maxAll  int // < 0: no cap
	maxAddr int // < 0: no cap
}

func newSessionCounts(maxAll, maxAddr int) *sessionCounts {
	return &sessionCounts{byAddr: map[string]map[string]time.Time{}, maxAll: maxAll, maxAddr: maxAddr}
}

// admit reserves a session for addr at now, lasting idle; it reports which
// cap refuses it: "" when none does, "address" or "total".
func (s *sessionCounts) admit(addr, id string, now time.Time, idle time.Duration) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(addr, s.byAddr[addr], now)
	m := s.byAddr[addr]
	if s.maxAddr >= 0 && len(m) >= s.maxAddr {
		return "address"
	}
	if s.maxAll >= 0 && s.total >= s.maxAll {
		for a, other := range s.byAddr { // the whole table, only when full
			s.prune(a, other, now)
		}
		if s.total >= s.maxAll {
			return "total"
		}
	}
	m = s.byAddr[addr]
	if m == nil {
		m = map[string]time.Time{}
		s.byAddr[addr] = m
	}
	m[id] = now.Add(idle)
	s.total++
	return ""
}

// prune drops the expired sessions of one address; the caller holds s.mu.
func (s *sessionCounts) prune(addr string, m map[string]time.Time, now time.Time) {
	for id, exp := range m {
		if !now.Before(exp) {
			delete(m, id)
			s.total--
		}
	}
	if m != nil && len(m) == 0 {
		delete(s.byAddr, addr)
	}
}

// end forgets a counted session. A session is counted by the address that
// created it until it ends here or passes its idle time from creation: one
// kept alive longer by use no longer counts, so the cap bounds what one
// address creates per idle period.
func (s *sessionCounts) end(addr, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.byAddr[addr]; m != nil {
		if _, ok := m[id]; ok {
			delete(m, id)
			s.total--
		}
		if len(m) == 0 {
			delete(s.byAddr, addr)
		}
	}
}

// openCounts counts open streams by a key (a session id, or a client
// address group) against one cap.
type openCounts struct {
	mu  sync.Mutex
	n   map[string]int
	max int // < 0: no cap
}

func newOpenCounts(max int) *openCounts { return &openCounts{n: map[string]int{}, max: max} }

// open takes one for key; false when key holds the cap already. A true
// open must be closed once.
func (o *openCounts) open(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.max >= 0 && o.n[key] >= o.max {
		return false
	}
	o.n[key]++
	return true
}

func (o *openCounts) close(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n[key]--; o.n[key] <= 0 {
		delete(o.n, key)
	}
}

// capOrDefault is an Options cap: 0 means def, negative means none (-1).
func capOrDefault(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return -1
	}
	return v
}
