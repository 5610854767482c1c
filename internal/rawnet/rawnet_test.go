package rawnet

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pair is a connected TCP pair over loopback: a accepted through
// Listener, b dialed and wrapped with Conn.
func pair(t *testing.T) (a, b net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	l := Listener(ln)
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	a, b = <-accepted, Conn(d)
	t.Cleanup(func() { a.Close(); b.Close() })
	for _, c := range []net.Conn{a, b} {
		if _, raw := c.(*conn); raw != (runtime.GOOS == "linux") {
			t.Fatalf("%T: raw %v on %s", c, raw, runtime.GOOS)
		}
	}
	return a, b
}

// opText is the text of the *net.OpError that *net.TCPConn's op on c
// returns for cause.
func opText(op string, c net.Conn, cause string) string {
	return op + " tcp " + c.LocalAddr().String() + "->" + c.RemoteAddr().String() + ": " + cause
}

// TestBytesBothWays sends 8 MiB each way at once, more than the sockets'
// buffers hold, so each write(2) loop meets EAGAIN and waits in the
// poller, and reads arrive in pieces.
func TestBytesBothWays(t *testing.T) {
	a, b := pair(t)
	a.SetDeadline(time.Now().Add(30 * time.Second)) // a lost byte fails, not hangs
	b.SetDeadline(time.Now().Add(30 * time.Second))
	out := make([]byte, 8<<20)
	for i := range out {
		out[i] = byte(i * 7 >> 3)
	}
	var wg sync.WaitGroup
	for _, c := range []net.Conn{a, b} {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if n, err := c.Write(out); n != len(out) || err != nil {
				t.Errorf("Write = %d, %v; want %d, nil", n, err, len(out))
			}
		}()
		go func() {
			defer wg.Done()
			got := make([]byte, len(out))
			if _, err := io.ReadFull(c, got); err != nil {
				t.Error(err)
			}
			if !bytes.Equal(got, out) {
				t.Error("the bytes read differ from the bytes written")
			}
		}()
	}
	wg.Wait()
}

// TestEOF: the peer's close reads as a bare io.EOF after the bytes sent
// before it.
func TestEOF(t *testing.T) {
	a, b := pair(t)
	if _, err := b.Write([]byte("last")); err != nil {
		t.Fatal(err)
	}
	b.Close()
	got, err := io.ReadAll(a)
	if string(got) != "last" || err != nil {
		t.Fatalf("ReadAll = %q, %v; want \"last\", nil", got, err)
	}
	if n, err := a.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("Read after EOF = %d, %v; want 0, io.EOF", n, err)
	}
}

func TestZeroLength(t *testing.T) {
	a, _ := pair(t)
	if n, err := a.Read(nil); n != 0 || err != nil {
		t.Errorf("Read(nil) = %d, %v; want 0, nil", n, err)
	}
	if n, err := a.Write(nil); n != 0 || err != nil {
		t.Errorf("Write(nil) = %d, %v; want 0, nil", n, err)
	}
}

// TestDeadline: a read deadline ends a Read waiting in the poller with
// the error *net.TCPConn gives, and the connection reads on after the
// deadline is cleared.
func TestDeadline(t *testing.T) {
	a, b := pair(t)
	a.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	n, err := a.Read(make([]byte, 4))
	var ne net.Error
	if n != 0 || err == nil || err.Error() != opText("read", a, "i/o timeout") ||
		!errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read past its deadline = %d, %v; want 0, %s", n, err, opText("read", a, "i/o timeout"))
	}
	a.SetReadDeadline(time.Time{})
	b.Write([]byte("more"))
	got := make([]byte, 4)
	if _, err := io.ReadFull(a, got); string(got) != "more" || err != nil {
		t.Fatalf("Read after the deadline cleared = %q, %v", got, err)
	}
}

// TestClose: Close ends a Read waiting in the poller, and a later Read or
// Write fails at once, each with net.ErrClosed as *net.TCPConn reports it.
func TestClose(t *testing.T) {
	a, _ := pair(t)
	done := make(chan error, 1)
	go func() {
		_, err := a.Read(make([]byte, 4))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // the Read is parked in the poller
	a.Close()
	want := opText("read", a, "use of closed network connection")
	if err := <-done; err == nil || err.Error() != want || !errors.Is(err, net.ErrClosed) {
		t.Fatalf("parked Read after Close = %v; want %s", err, want)
	}
	if _, err := a.Read(make([]byte, 4)); err == nil || err.Error() != want {
		t.Fatalf("Read after Close = %v; want %s", err, want)
	}
	want = opText("write", a, "use of closed network connection")
	if _, err := a.Write([]byte("x")); err == nil || err.Error() != want {
		t.Fatalf("Write after Close = %v; want %s", err, want)
	}
}

// TestWriteToResetPeer: once the peer has reset the connection, Write
// fails with the system call's error (ECONNRESET or EPIPE) and the bytes
// written before it; the process is not stopped by SIGPIPE.
func TestWriteToResetPeer(t *testing.T) {
	a, b := pair(t)
	if err := b.(interface{ SetLinger(int) error }).SetLinger(0); err != nil {
		t.Fatal(err)
	}
	b.Close() // RST
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = a.Write(make([]byte, 64<<10))
		time.Sleep(time.Millisecond)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "write" || !(errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
		t.Fatalf("Write to a reset peer = %v; want a write *net.OpError of ECONNRESET or EPIPE", err)
	}
	if want := opText("write", a, "write: "+errors.Unwrap(errors.Unwrap(err)).Error()); err.Error() != want {
		t.Fatalf("error text %q; want %q", err, want)
	}
}

// TestNotTCP: a connection that is not a *net.TCPConn is returned as it is.
func TestNotTCP(t *testing.T) {
	p, q := net.Pipe()
	defer p.Close()
	defer q.Close()
	if c := Conn(p); c != p {
		t.Fatalf("Conn(net.Pipe end) = %T; want it unchanged", c)
	}
}

// TestDialer: the connections Dialer's dial makes come wrapped by Conn (a
// TCP one raw on Linux, a pipe end as it is), and its errors unchanged.
func TestDialer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var d net.Dialer
	c, err := Dialer(d.DialContext)(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, raw := c.(*conn); raw != (runtime.GOOS == "linux") {
		t.Errorf("%T: raw %v on %s", c, raw, runtime.GOOS)
	}
	p, q := net.Pipe()
	defer p.Close()
	defer q.Close()
	if got, err := Dialer(func(context.Context, string, string) (net.Conn, error) { return p, nil })(context.Background(), "pipe", ""); got != p || err != nil {
		t.Errorf("pipe: %T, %v; want the pipe end unchanged", got, err)
	}
	refused := errors.New("refused")
	if got, err := Dialer(func(context.Context, string, string) (net.Conn, error) { return nil, refused })(context.Background(), "tcp", "x:1"); got != nil || err != refused {
		t.Errorf("error: %v, %v; want nil and the dial's own error", got, err)
	}
}

// TestHTTPServerSeesHangUp: net/http served through Listener still
// notices a client that hangs up mid-request (its background read of
// the connection, through Read) and cancels the request's context; and
// answers keep-alive requests on one connection.
func TestHTTPServerSeesHangUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cancelled := make(chan error, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/wait" {
			select {
			case <-r.Context().Done():
				cancelled <- context.Cause(r.Context())
			case <-time.After(10 * time.Second):
				cancelled <- errors.New("the server did not see the hang-up within 10 s")
			}
			return
		}
		_, _ = io.WriteString(w, "ok "+r.URL.Path)
	})}
	go srv.Serve(Listener(ln))
	defer srv.Close()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range []string{"/a", "/b"} {
		if _, err := io.WriteString(c, "GET "+p+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		n, err := c.Read(buf)
		if err != nil || !bytes.HasSuffix(buf[:n], []byte("\r\n\r\nok "+p)) {
			t.Fatalf("answer to %s = %q, %v", p, buf[:n], err)
		}
	}
	if _, err := io.WriteString(c, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	c.Close()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("the request's context ended with %v; want context.Canceled", err)
	}
}
