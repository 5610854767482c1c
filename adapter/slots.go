package adapter

import (
	"net/url"
	"sync"

	"github.com/restmcp/restmcp/openapi"
)

// callSlots caps the tools/call requests in progress: in all, and per
// upstream host (Options.MaxConcurrentCalls, MaxConcurrentCallsPerHost).
// A nil *callSlots has no caps.
type callSlots struct {
	all     chan struct{} // nil: no cap
	perHost int           // 0: no cap
	mu      sync.Mutex
	hosts   map[string]chan struct{}
}

func newCallSlots(all, perHost int) *callSlots {
	if all <= 0 && perHost <= 0 {
		return nil
	}
	c := &callSlots{perHost: max(perHost, 0), hosts: map[string]chan struct{}{}}
	if all > 0 {
		c.all = make(chan struct{}, all)
	}
	return c
}

// acquire takes a slot for a call of t, without waiting; ok is false when
// a cap is reached. release gives the slots back.
func (c *callSlots) acquire(t *openapi.Tool) (release func(), ok bool) {
	if c == nil {
		return func() {}, true
	}
	if c.all != nil {
		select {
		case c.all <- struct{}{}:
		default:
			return nil, false
		}
	}
	var host chan struct{}
	if c.perHost > 0 {
		h := t.ServerURL
		if u, err := url.Parse(t.ServerURL); err == nil {
			h = u.Host
		}
		c.mu.Lock()
		host = c.hosts[h]
		if host == nil {
			host = make(chan struct{}, c.perHost)
			c.hosts[h] = host
		}
		c.mu.Unlock()
		select {
		case host <- struct{}{}:
		default:
			if c.all != nil {
				<-c.all
			}
			return nil, false
		}
	}
	return func() {
		if host != nil {
			<-host
		}
		if c.all != nil {
			<-c.all
		}
	}, true
}
