package manager

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// mux serves /metrics, /healthz (the process works: for a leader, its lease is being
// renewed; for a shard group's member, no hand-over is stuck past its bound) and /readyz (its caches are synced: a standby is ready to take over).
func (m *Manager) mux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if m.elector != nil {
			if err := m.elector.Check(); err != nil {
				http.Error(w, fmt.Sprintf("leaderelection: %v", err), http.StatusInternalServerError)
				return
			}
		}
		if m.shards != nil {
			if err := m.shards.member.Check(); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !m.synced.Load() {
			http.Error(w, "informers not synced", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// serve starts a server on each listener, counted in wg, and returns them for Shutdown.
// A server that stops for another reason than Shutdown is logged and reported to fail.
func (m *Manager) serve(wg *sync.WaitGroup, fail func(error)) []*http.Server {
	var servers []*http.Server
	mux := m.mux()
	// The server's own complaints (a client's failed TLS handshake: scanners, scrapers
	// that do not trust the certificate) are the operator's only with -v.
	errorLog := slog.NewLogLogger(m.log.Handler(), slog.LevelInfo)
	start := func(l net.Listener, srv *http.Server, scheme string) {
		servers = append(servers, srv)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if srv.TLSConfig != nil {
				err = srv.ServeTLS(l, "", "")
			} else {
				err = srv.Serve(l)
			}
			if !errors.Is(err, http.ErrServerClosed) {
				err = fmt.Errorf("serving %s://%s: %w", scheme, l.Addr(), err)
				m.log.Error("the HTTP endpoints stopped; stopping the manager", "err", err)
				fail(err)
			}
		}()
	}
	if m.secure != nil {
		start(m.secure, &http.Server{Handler: m.reviewer.guard(mux, m.log), ReadHeaderTimeout: 10 * time.Second, ErrorLog: errorLog,
			TLSConfig: &tls.Config{Certificates: []tls.Certificate{m.cert}, MinVersion: tls.VersionTLS12}}, "https")
	}
	if m.plain != nil {
		start(m.plain, &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: errorLog}, "http")
	}
	return servers
}
