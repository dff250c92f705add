package chaos

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"github.com/kinformer/kinformer/selfsigned"
)

// Proxy forwards HTTPS requests to an apiserver and injects faults on command.
type Proxy struct {
	upstream  *url.URL
	transport *http.Transport
	srv       *http.Server
	ln        net.Listener
	caPEM     []byte

	mu        sync.Mutex
	conns     map[*faultConn]struct{}
	blackhole bool
	delay     time.Duration
	fragment  bool
	failLeft  int
	failCode  int
	failEach  int             // answer the next request of each client with this code
	failed    map[string]bool // clients (by User-Agent) failEach has answered
	closed    bool            // by Close: requests still arriving are refused

	handlers sync.WaitGroup // requests being answered (added under mu, while not closed)
	served   chan struct{}  // closed when Serve has returned
}

// NewProxy listens on a free loopback port and forwards to upstream, trusting upstreamCA.
func NewProxy(upstream string, upstreamCA []byte) (*Proxy, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(upstreamCA) {
		return nil, fmt.Errorf("chaos: no certificate in the upstream CA")
	}
	cert, caPEM, err := selfsigned.New("kinformer chaos proxy")
	if err != nil {
		return nil, err
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{upstream: u, caPEM: caPEM, conns: map[*faultConn]struct{}{}, served: make(chan struct{})}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true,
		MaxIdleConnsPerHost: 100, IdleConnTimeout: 30 * time.Second}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u); r.Out.Host = u.Host },
		Transport:     transport,
		FlushInterval: -1, // watches stream: every write goes out at once
		ErrorLog:      log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			writeStatus(w, http.StatusBadGateway, "ServiceUnavailable", "chaos proxy: upstream: "+err.Error(), 0)
		},
	}
	p.srv = &http.Server{Handler: p.handler(rp), ReadHeaderTimeout: 10 * time.Second,
		// Handshakes cut by the faults are the point, not news.
		ErrorLog:  log.New(io.Discard, "", 0),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}}
	p.ln = tls.NewListener(&faultListener{Listener: raw, p: p}, p.srv.TLSConfig)
	p.transport = transport
	go func() { _ = p.srv.Serve(p.ln); close(p.served) }()
	return p, nil
}

// URL is where clients reach the proxy.
func (p *Proxy) URL() string { return "https://" + p.ln.Addr().String() }

// CAData is the PEM certificate clients must trust for the proxy.
func (p *Proxy) CAData() []byte { return p.caPEM }

// Close stops the proxy and every connection through it, and returns when its
// goroutines have: the requests it was answering have ended, and so have its connections
// to the upstream, which were still busy with them when the clients' connections closed.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	_ = p.srv.Close()
	<-p.served
	handled := make(chan struct{})
	go func() { p.handlers.Wait(); close(handled) }()
	select {
	case <-handled:
	case <-time.After(10 * time.Second): // left to a goroutine check to report
	}
	p.transport.CloseIdleConnections()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Conn.Close()
	}
}

// CloseIdleConnections closes the proxy's idle connections to the upstream.
func (p *Proxy) CloseIdleConnections() { p.transport.CloseIdleConnections() }

// ResetAll aborts every open client connection with a TCP RST, mid-stream.
func (p *Proxy) ResetAll() int {
	p.mu.Lock()
	conns := make([]*faultConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.reset()
	}
	return len(conns)
}

// Blackhole makes every open connection, and every new one while on, swallow what it is
// sent and send nothing, without closing: the peer sees silence. Connections blackholed
// stay so; turning it off only spares new ones.
func (p *Proxy) Blackhole(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blackhole = on
	if on {
		for c := range p.conns {
			c.dead.Store(true)
		}
	}
}

// Slow delays each write to clients by d and, with fragment, splits it into pieces of a
// few bytes, so frames arrive in arbitrary pieces. Zero and false turn it off.
func (p *Proxy) Slow(d time.Duration, fragment bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay, p.fragment = d, fragment
}

// FailEach answers the next request of each client (told apart by User-Agent) with code,
// so that every engine behind the proxy meets the same fault; 0 turns it off.
func (p *Proxy) FailEach(code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failEach, p.failed = code, map[string]bool{}
}

// Fail answers the next n requests with code (429 carries Retry-After: 1).
func (p *Proxy) Fail(n, code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failLeft, p.failCode = n, code
}

func (p *Proxy) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			writeStatus(w, http.StatusServiceUnavailable, "ServiceUnavailable", "chaos proxy: closed", 0)
			return
		}
		p.handlers.Add(1)
		defer p.handlers.Done()
		code := 0
		if ua := r.UserAgent(); p.failEach != 0 && !p.failed[ua] {
			p.failed[ua] = true
			code = p.failEach
		} else if p.failLeft > 0 {
			p.failLeft--
			code = p.failCode
		}
		p.mu.Unlock()
		switch code {
		case 0:
			next.ServeHTTP(w, r)
		case http.StatusTooManyRequests:
			writeStatus(w, code, "TooManyRequests", "chaos proxy: too many requests, please try again later", 1)
		default:
			writeStatus(w, code, "InternalError", "chaos proxy: injected failure", 0)
		}
	})
}

func writeStatus(w http.ResponseWriter, code int, reason, msg string, retryAfter int) {
	w.Header().Set("Content-Type", "application/json")
	if retryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(retryAfter))
	}
	w.WriteHeader(code)
	details := ""
	if retryAfter > 0 {
		details = fmt.Sprintf(`,"details":{"retryAfterSeconds":%d}`, retryAfter)
	}
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"reason":%q,"code":%d%s}`, msg, reason, code, details)
}
