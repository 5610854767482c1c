package metering

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/restmcp/restmcp/internal/testenv"
)

// faultProxy stands between the meter and Redis and breaks the link on
// demand: in proxyCut every reply is swallowed and the connection closed
// (the commands reach Redis, their answers never come back); in
// proxyPartition commands are held and delivered only when the link heals,
// and replies are swallowed meanwhile.
type faultProxy struct {
	t      *testing.T
	ln     net.Listener
	to     string
	mode   atomic.Int32
	mu     sync.Mutex
	conns  []net.Conn
	healed chan struct{} // closed when a partition ends (setMode)
}

// setMode switches the link's behaviour; leaving proxyPartition releases
// the requests it held.
func (p *faultProxy) setMode(m int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	was := p.mode.Swap(m)
	switch {
	case m == proxyPartition && was != proxyPartition:
		p.healed = make(chan struct{})
	case m != proxyPartition && was == proxyPartition:
		close(p.healed)
	}
}

// partitionEnded is closed once the current partition ends.
func (p *faultProxy) partitionEnded() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.healed
}

const (
	proxyOK int32 = iota
	proxyCut
	proxyPartition
)

func startFaultProxy(t *testing.T, to string) *faultProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{t: t, ln: ln, to: to}
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", to)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go p.pipe(c, s, true)
			go p.pipe(s, c, false)
		}
	}()
	return p
}

// pipe copies from src to dst as the mode says; toRedis tells the
// direction.
func (p *faultProxy) pipe(src, dst net.Conn, toRedis bool) {
	defer func() { _ = src.Close(); _ = dst.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			switch m := p.mode.Load(); {
			case !toRedis && m != proxyOK:
				if m == proxyCut {
					return // the reply is lost and the link breaks
				}
				continue // partition: swallowed
			case toRedis && m == proxyPartition:
				<-p.partitionEnded() // held until the link heals
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *faultProxy) addr() string { return p.ln.Addr().String() }

// fault is one way for Redis to fail under load, and to recover.
type fault struct {
	name   string
	aof    bool // Redis keeps an append-only file, fsync on every write
	break_ func(rp *redisProc, fp *faultProxy)
	heal   func(rp *redisProc, fp *faultProxy)
}

var faults = []fault{
	{name: "kill-9", aof: true,
		break_: func(rp *redisProc, _ *faultProxy) { rp.kill9() },
		heal:   func(rp *redisProc, _ *faultProxy) { rp.start() }},
	{name: "sigstop",
		break_: func(rp *redisProc, _ *faultProxy) { _ = rp.cmd.Process.Signal(syscall.SIGSTOP) },
		heal:   func(rp *redisProc, _ *faultProxy) { _ = rp.cmd.Process.Signal(syscall.SIGCONT) }},
	{name: "replies-lost",
		break_: func(_ *redisProc, fp *faultProxy) { fp.setMode(proxyCut) },
		heal:   func(_ *redisProc, fp *faultProxy) { fp.setMode(proxyOK) }},
	{name: "network-partition",
		break_: func(_ *redisProc, fp *faultProxy) { fp.setMode(proxyPartition) },
		heal:   func(_ *redisProc, fp *faultProxy) { fp.setMode(proxyOK) }},
}

// TestCountsExactUnderFaults runs six callers against an OutageMeter while
// Redis fails in each way (killed with its append-only file kept, stopped,
// its replies lost, the network partitioned) and recovers, under each
// outage policy. Every fourth call served is refunded, as under counting
// success. Once Redis answers and every call is settled, the day, month
// and per-tool counters equal exactly the calls served (less those
// refunded), and stay so.
func TestCountsExactUnderFaults(t *testing.T) {
	for _, f := range faults {
		for _, policy := range []Outage{OutageFailClosed, OutageFailOpen} {
			t.Run(f.name+"/"+string(policy), func(t *testing.T) {
				t.Parallel()
				runFault(t, f, policy)
			})
		}
	}
}

func runFault(t *testing.T, f fault, policy Outage) {
	rp := startRedisProcWith(t, f.aof)
	fp := startFaultProxy(t, rp.addr)
	client := redis.NewClient(&redis.Options{Addr: fp.addr(), DialTimeout: 200 * time.Millisecond, DialerRetries: 1,
		ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: -1, PoolSize: 16})
	t.Cleanup(func() { _ = client.Close() })
	rm := NewRedis(client, Options{})
	o := NewOutageMeter(context.Background(), rm, OutageOptions{Policy: policy, RetryInterval: 50 * time.Millisecond})
	t.Cleanup(func() { _ = o.Close(context.Background()) })
	p := mustParsePlans(t, outagePlan).Plan("p")
	keyID := newKeyID(t, nil)
	c := Call{KeyID: keyID, Plan: p, Tool: "two", Cost: 2}

	var served, refunded, refused atomic.Int64
	var phase atomic.Int32 // 0 before the fault, 1 during, 2 after, 3 stop
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pace := time.NewTicker(2 * time.Millisecond) // each client calls at most every 2 ms
			defer pace.Stop()
			for ; phase.Load() < 3; <-pace.C {
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				d, err := o.AdmitCall(ctx, c)
				cancel()
				if err != nil || !d.Allowed {
					refused.Add(1)
					for range 5 { // and backs off 10 ms after a refusal
						<-pace.C
					}
					continue
				}
				if n := served.Add(1); n%4 == 0 {
					rctx, rcancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
					if err := o.Refund(rctx, c, d); err != nil {
						t.Errorf("refund: %v", err)
					}
					rcancel()
					refunded.Add(1)
				}
			}
		}()
	}
	testenv.Eventually(t, 10*time.Second, "calls served before the fault", func() bool { return served.Load() >= 50 })
	phase.Store(1)
	f.break_(rp, fp)
	time.Sleep(1500 * time.Millisecond) // the fault lasts 1.5 s under load
	f.heal(rp, fp)
	phase.Store(2)
	healedAt := served.Load()
	testenv.Eventually(t, 20*time.Second, "calls served after the fault", func() bool { return served.Load() >= healedAt+50 })
	phase.Store(3)
	wg.Wait()

	ctx := context.Background()
	direct := rp.client()
	waitFor(t, "Redis to answer and every call to be settled and replayed", func() bool {
		s := o.Stats()
		return direct.Ping(ctx).Err() == nil && !s.Down && s.Buffered == 0 && s.Unsettled == 0
	})
	net := served.Load() - refunded.Load()
	s := o.Stats()
	t.Logf("%s/%s: served %d (refunded %d), refused %d; settled by id %d, replayed %d, degraded %d",
		f.name, policy, served.Load(), refunded.Load(), refused.Load(), s.Settled, s.Replayed, s.Degraded)
	// Scripts held by a stopped Redis or a partition run when it resumes:
	// read every 20 ms for 200 ms, checking every read.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := range 10 {
		r := mustReport(t, NewRedis(direct, Options{}), keyID, p)
		if r.Periods[0].Used != 2*net || r.Periods[1].Used != 2*net || r.Periods[1].Tools["two"] != (ToolUsage{net, 2 * net}) {
			t.Fatalf("read %d: day %d, month %d, tool %+v; want %d units and %d calls (the calls served less those refunded)",
				i, r.Periods[0].Used, r.Periods[1].Used, r.Periods[1].Tools["two"], 2*net, net)
		}
		<-tick.C
	}
	if served.Load() == 0 || s.UnsettledDropped != 0 || s.Dropped != 0 {
		t.Errorf("served %d, unsettled dropped %d, dropped %d; want calls served and nothing dropped", served.Load(), s.UnsettledDropped, s.Dropped)
	}
	if (f.name == "replies-lost" || f.name == "network-partition") && s.Settled+s.Replayed == 0 {
		t.Errorf("no call was settled or replayed: the fault was not exercised")
	}
	deleteKeys(t, direct, keyID)
}
