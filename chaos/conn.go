package chaos

import (
	"net"
	"sync/atomic"
	"time"
)

// faultListener wraps each accepted TCP connection so the proxy can reach it.
type faultListener struct {
	net.Listener
	p *Proxy
}

func (l *faultListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	fc := &faultConn{Conn: c, p: l.p}
	l.p.mu.Lock()
	fc.dead.Store(l.p.blackhole)
	l.p.conns[fc] = struct{}{}
	l.p.mu.Unlock()
	return fc, nil
}

// faultConn is one client connection, below TLS: the faults act on raw bytes.
type faultConn struct {
	net.Conn
	p    *Proxy
	dead atomic.Bool // blackholed: reads discard, writes vanish
}

// Read discards what a blackholed connection receives (the client's pings), but still
// reports the client closing it, so the server side ends with it.
func (c *faultConn) Read(b []byte) (int, error) {
	for {
		n, err := c.Conn.Read(b)
		if !c.dead.Load() || err != nil {
			return n, err
		}
	}
}

func (c *faultConn) Write(b []byte) (int, error) {
	if c.dead.Load() {
		return len(b), nil
	}
	c.p.mu.Lock()
	delay, fragment := c.p.delay, c.p.fragment
	c.p.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	if !fragment {
		return c.Conn.Write(b)
	}
	written := 0
	for written < len(b) {
		end := min(written+1+written%13, len(b)) // pieces of 1 to 13 bytes
		n, err := c.Conn.Write(b[written:end])
		written += n
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// reset aborts the connection with an RST instead of a FIN.
func (c *faultConn) reset() {
	if tcp, ok := c.Conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = c.Conn.Close()
}

func (c *faultConn) Close() error {
	c.p.mu.Lock()
	delete(c.p.conns, c)
	c.p.mu.Unlock()
	return c.Conn.Close()
}
