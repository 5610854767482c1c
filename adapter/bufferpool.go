package adapter

import (
	"sync"
	"sync/atomic"
)

// bufferPool holds idle byte buffers of one size for large answers (the
// pooled bodies of pooledbody.go, writeLarge's write buffers).
//
// A sync.Pool alone keeps more of them than the calls need: it caches
// per processor, and the buffer last put back sits in the private slot of
// the processor that put it, out of reach of a call running on another
// one (a call's goroutine can move while it waits for the upstream),
// which then makes a buffer of its own. Every buffer kept is live heap,
// and the collector lets the heap grow by as much again (GOGC=100): with
// 1 MB answers one at a time on two processors, the live heap at each
// collection was 6 MB where one list gives 4, and the heap goal 13 MB
// where it gives 10 (GODEBUG=gctrace=1, restmcp-bench --answer-bytes).
//
// So the first keepIdle buffers put back are kept in one list that every
// processor takes from; only buffers beyond those (many large answers at
// once) go to the sync.Pool, which the collector empties when they stay
// unused for two cycles. What the lists keep is bounded across all pools
// by a budget (sharedIdle, 16 MiB), so a deployment that once answered a
// few 60 MB bodies does not keep them for good: a buffer that would
// exceed it goes to the sync.Pool too.
type bufferPool struct {
	mu     sync.Mutex
	idle   []*[]byte   // at most keepIdle, each counted in budget
	more   sync.Pool   // *[]byte beyond those
	budget *idleBudget // nil: sharedIdle
}

// keepIdle is how many buffers of a size bufferPool keeps outside the
// sync.Pool: enough for one large answer being read while another is
// written, and a third.
const keepIdle = 3

// idleBudget bounds the capacity, in bytes, of the buffers that the
// bufferPools sharing it keep in their idle lists.
type idleBudget struct {
	limit int64
	used  atomic.Int64
}

// sharedIdle is the budget of every bufferPool of the process: 16 MiB.
var sharedIdle = idleBudget{limit: 16 << 20}

// budgetOrShared is p's budget: its own (a test's), or sharedIdle.
func (p *bufferPool) budgetOrShared() *idleBudget {
	if p.budget == nil {
		return &sharedIdle
	}
	return p.budget
}

// get is an idle buffer, or nil when there is none.
func (p *bufferPool) get() *[]byte {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		b := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		p.budgetOrShared().used.Add(-int64(cap(*b)))
		return b
	}
	p.mu.Unlock()
	b, _ := p.more.Get().(*[]byte)
	return b
}

// put makes b idle; b must not be used after.
func (p *bufferPool) put(b *[]byte) {
	size, budget := int64(cap(*b)), p.budgetOrShared()
	p.mu.Lock()
	if len(p.idle) < keepIdle {
		if budget.used.Add(size) <= budget.limit {
			p.idle = append(p.idle, b)
			p.mu.Unlock()
			return
		}
		budget.used.Add(-size) // over the bound: undo
	}
	p.mu.Unlock()
	p.more.Put(b)
}
