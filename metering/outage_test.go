package metering

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/restmcp/restmcp/internal/testenv"
)

// redisProc is a second, private redis-server on a free loopback port, so
// that a test can stop and restart it. Its data survives a restart
// (SHUTDOWN SAVE into its own directory), as a production Redis with
// persistence would.
type redisProc struct {
	t    *testing.T
	addr string
	dir  string
	aof  bool
	cmd  *exec.Cmd
}

// startRedisProc starts the server, or skips the test loudly when
// redis-server is not installed (a failure when RESTMCP_REQUIRE_REDIS=1).
func startRedisProc(t *testing.T) *redisProc { return startRedisProcWith(t, false) }

// startRedisProcWith is startRedisProc; with aof, the server keeps an
// append-only file and fsyncs it on every write (appendfsync always), so
// that what it applied survives a kill -9.
func startRedisProcWith(t *testing.T, aof bool) *redisProc {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		msg := "*** redis-server NOT INSTALLED: the outage test did NOT run (" + err.Error() + ")"
		testenv.Unavailable(t, "RESTMCP_REQUIRE_REDIS", "redis-server", msg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	p := &redisProc{t: t, addr: addr, dir: t.TempDir(), aof: aof}
	p.start()
	t.Cleanup(func() {
		if p.cmd != nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	return p
}

func (p *redisProc) start() {
	p.t.Helper()
	_, port, _ := net.SplitHostPort(p.addr)
	appendonly := []string{"--appendonly", "no"}
	if p.aof {
		appendonly = []string{"--appendonly", "yes", "--appendfsync", "always"}
	}
	p.cmd = exec.Command("redis-server", append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "",
		"--dir", p.dir, "--daemonize", "no", "--logfile", ""}, appendonly...)...)
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("starting redis-server: %v", err)
	}
	c := redis.NewClient(&redis.Options{Addr: p.addr, DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	testenv.Eventually(p.t, 10*time.Second, "redis-server on "+p.addr+" to answer", func() bool {
		return c.Ping(context.Background()).Err() == nil
	})
}

// kill9 kills the server at once (SIGKILL): it saves nothing more.
func (p *redisProc) kill9() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.cmd = nil
}

// stop saves the data and stops the server.
func (p *redisProc) stop() {
	p.t.Helper()
	c := redis.NewClient(&redis.Options{Addr: p.addr, MaxRetries: -1})
	_ = c.Do(context.Background(), "SHUTDOWN", "SAVE").Err() // the connection closes: an error is expected
	_ = c.Close()
	_ = p.cmd.Wait()
	p.cmd = nil
}

// client returns a client that fails fast while the server is down.
func (p *redisProc) client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: p.addr, DialTimeout: 200 * time.Millisecond, DialerRetries: 1,
		ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: -1})
	p.t.Cleanup(func() { _ = c.Close() })
	return c
}

// outagePlan has limits no test call reaches.
const outagePlan = "default_plan: p\nplans:\n  p:\n    rate_limits: {per_hour: 100000}\n    quotas: {day: 100000}\n    costs: {two: 2}\n"

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, what, cond)
}

// TestOutageFailClosed stops and restarts Redis during a run of calls:
// every call during the gap fails with ErrUnavailable, and the counters
// hold exactly the calls admitted before and after.
func TestOutageFailClosed(t *testing.T) {
	proc := startRedisProc(t)
	clk := newFakeClock(testStart)
	rm := NewRedis(proc.client(), Options{})
	rm.serverNow, rm.clientNow = clk.Now, clk.Now
	o := NewOutageMeter(context.Background(), rm, OutageOptions{})
	t.Cleanup(func() { _ = o.Close(context.Background()) })
	p := mustParsePlans(t, outagePlan).Plan("p")
	c := Call{KeyID: "outage", Plan: p, Tool: "two", Cost: 2}
	ctx := context.Background()

	run := func(phase string, n int, wantErr bool) {
		for i := range n {
			d, err := o.AdmitCall(ctx, c)
			switch {
			case wantErr && (!errors.Is(err, ErrUnavailable) || d.Allowed):
				t.Fatalf("%s call %d: %+v, %v; want ErrUnavailable", phase, i, d, err)
			case !wantErr && (err != nil || !d.Allowed || d.Degraded):
				t.Fatalf("%s call %d: %+v, %v; want allowed", phase, i, d, err)
			}
		}
	}
	run("before", 20, false)
	proc.stop()
	run("during the outage", 20, true)
	if err := o.Ping(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Ping during the outage: %v, want ErrUnavailable", err)
	}
	proc.start()
	// go-redis's pool keeps answering with the last dial error until its
	// own background redial succeeds (about a second).
	waitFor(t, "the client to reconnect", func() bool { return o.Ping(ctx) == nil })
	run("after", 20, false)
	r := mustReport(t, o, "outage", p)
	if r.Periods[1].Used != 80 || r.Periods[1].Tools["two"] != (ToolUsage{40, 80}) {
		t.Errorf("month usage %+v, want 80 units in 40 calls (only the calls served)", r.Periods[1])
	}
	if s := o.Stats(); s.Degraded != 0 || s.Buffered != 0 {
		t.Errorf("Stats = %+v, want nothing degraded or buffered", s)
	}
}

// TestOutageFailOpen stops and restarts Redis during a run of calls: calls
// during the gap are admitted Degraded, and once Redis answers the
// buffered counts are replayed, so the final counters equal the calls
// served (less three refunded calls, one by Refund and two by Refunds).
func TestOutageFailOpen(t *testing.T) {
	proc := startRedisProc(t)
	clk := newFakeClock(testStart)
	rm := NewRedis(proc.client(), Options{})
	rm.serverNow, rm.clientNow = clk.Now, clk.Now
	o := NewOutageMeter(context.Background(), rm, OutageOptions{Policy: OutageFailOpen, RetryInterval: 50 * time.Millisecond})
	p := mustParsePlans(t, outagePlan).Plan("p")
	c := Call{KeyID: "outage", Plan: p, Tool: "two", Cost: 2}
	ctx := context.Background()

	served := 0
	var degraded []Decision
	run := func(phase string, n int, wantDegraded bool) {
		for i := range n {
			d, err := o.AdmitCall(ctx, c)
			if err != nil || !d.Allowed || d.Degraded != wantDegraded {
				t.Fatalf("%s call %d: %+v, %v; want allowed, Degraded %v", phase, i, d, err, wantDegraded)
			}
			if d.Degraded {
				degraded = append(degraded, d)
			}
			served++
		}
	}
	run("before", 20, false)
	proc.stop()
	run("during the outage", 25, true)
	if err := o.Refund(ctx, c, degraded[0]); err != nil { // e.g. its upstream failed (counting: success)
		t.Fatal(err)
	}
	// The usage writer's batch of two more refunds: buffered the same way.
	if errs := o.Refunds(ctx, []RefundRequest{{c, degraded[1]}, {c, degraded[2]}}); len(errs) != 2 || errs[0] != nil || errs[1] != nil {
		t.Fatalf("Refunds while down: %v", errs)
	}
	if err := o.RecordEvent(ctx, Event{KeyID: "outage"}); err != nil {
		t.Errorf("RecordEvent while down: %v, want kept for later", err)
	}
	if s := o.Stats(); !s.Down || s.DownShards != 1 || s.Buffered != 28 || s.Degraded != 25 || s.EventsKept != 1 || s.DroppedEvents != 0 {
		t.Errorf("Stats during the outage = %+v, want down (one shard), 28 buffered, 25 degraded, 1 event kept", s)
	}
	proc.start()
	waitFor(t, "the replay", func() bool { s := o.Stats(); return !s.Down && s.Buffered == 0 })
	run("after", 20, false)
	if err := o.Close(ctx); err != nil {
		t.Fatal(err)
	}

	want := int64(served - 3)
	r := mustReport(t, rm, "outage", p)
	if r.Periods[0].Used != 2*want || r.Periods[1].Used != 2*want || r.Periods[1].Tools["two"] != (ToolUsage{want, 2 * want}) {
		t.Errorf("usage %+v, want %d calls and %d units (the %d calls served, three refunded)", r.Periods, want, 2*want, served)
	}
	if s := o.Stats(); s.Replayed != 28 || s.Dropped != 0 || s.EventsKept != 0 || s.EventsReplayed != 1 || s.DroppedEvents != 0 {
		t.Errorf("Stats = %+v, want 28 replayed, none dropped, the kept event written", s)
	}
	t.Cleanup(func() { deleteKeys(t, proc.client(), "outage") })
}

// TestOutageBufferBound checks that the local buffer keeps only the newest
// BufferSize entries and counts the dropped ones.
func TestOutageBufferBound(t *testing.T) {
	proc := startRedisProc(t)
	clk := newFakeClock(testStart)
	rm := NewRedis(proc.client(), Options{})
	rm.serverNow, rm.clientNow = clk.Now, clk.Now
	o := NewOutageMeter(context.Background(), rm, OutageOptions{Policy: OutageFailOpen, BufferSize: 5, RetryInterval: 50 * time.Millisecond})
	t.Cleanup(func() { _ = o.Close(context.Background()) })
	p := mustParsePlans(t, outagePlan).Plan("p")
	ctx := context.Background()

	proc.stop()
	for i := range 12 {
		c := Call{KeyID: "outage", Plan: p, Tool: fmt.Sprintf("t%02d", i), Cost: 1}
		if d, err := o.AdmitCall(ctx, c); err != nil || !d.Degraded {
			t.Fatalf("call %d: %+v, %v; want Degraded", i, d, err)
		}
	}
	if s := o.Stats(); s.Buffered != 5 || s.Dropped != 7 {
		t.Errorf("Stats = %+v, want 5 buffered, 7 dropped", s)
	}
	proc.start()
	waitFor(t, "the replay", func() bool { s := o.Stats(); return !s.Down && s.Buffered == 0 })
	r := mustReport(t, rm, "outage", p)
	if r.Periods[1].Used != 5 || len(r.Periods[1].Tools) != 5 || r.Periods[1].Tools["t07"].Calls != 1 || r.Periods[1].Tools["t11"].Calls != 1 {
		t.Errorf("month usage %+v, want the 5 newest calls (t07..t11)", r.Periods[1])
	}
	t.Cleanup(func() { deleteKeys(t, proc.client(), "outage") })
}
