package manager

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/selfsigned"
)

// SecureServing serves /metrics, /healthz and /readyz over HTTPS as kube-controller-
// manager serves its secure port: /healthz and /readyz answer anyone (a kubelet's probe
// carries no token); every other request needs a bearer token that the apiserver
// authenticates (a TokenReview) for a user that it allows the request's verb on its
// path (a SubjectAccessReview on the non-resource URL, such as get on /metrics).
//
// A request without a token is refused with 401, a token the apiserver rejects with
// 401, a user it does not allow with 403. (kube-controller-manager authenticates a
// request without a token as system:anonymous and refuses it with 403, unless RBAC
// allows system:anonymous; kinformer has no anonymous user.) A review that fails
// answers 401 (authentication) or 500 (authorization) and is logged. Answers are kept
// 10 s, in bounded caches.
//
// The manager's own user must be allowed to create tokenreviews and
// subjectaccessreviews: the ClusterRole system:auth-delegator.
type SecureServing struct {
	// Addr to listen on ["": no secure endpoints]. kube-controller-manager's is
	// 0.0.0.0:10257, every interface: the endpoints check their callers.
	Addr string
	// Certificate to serve [nil: a self-signed one made by New, for localhost,
	// 127.0.0.1, ::1, the host's name and Addr's host].
	Certificate *tls.Certificate
	// Reviewer sends the reviews [nil: a client of its own built from Options.Client's
	// configuration, so that a flood of requests with made-up tokens spends its own
	// request budget, never the controllers'].
	Reviewer *listwatch.Client
}

// setUpSecure makes what the secure port needs: its certificate and its reviewer.
func (m *Manager) setUpSecure() error {
	ss := m.opts.SecureServing
	if ss.Certificate != nil {
		m.cert = *ss.Certificate
	} else {
		cert, caPEM, err := selfsigned.New("kinformer-controller-manager", certHosts(ss.Addr)...)
		if err != nil {
			return fmt.Errorf("self-signed certificate: %w", err)
		}
		m.cert, m.selfSignedPEM = cert, caPEM
	}
	c := ss.Reviewer
	if c == nil {
		cfg := m.opts.Client.Config()
		var err error
		if c, err = listwatch.New(&cfg); err != nil {
			return fmt.Errorf("the reviews' client: %w", err)
		}
		m.ownReviewClient = c
	}
	m.reviewer = newReviewer(c, clock.Real{})
	return nil
}

// certHosts are the names a self-signed certificate is made for besides loopback's.
func certHosts(addr string) []string {
	var hosts []string
	if name, err := os.Hostname(); err == nil && name != "" {
		hosts = append(hosts, name)
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err == nil && host != "" && (ip == nil || !ip.IsUnspecified()) {
		hosts = append(hosts, host)
	}
	return hosts
}

// openPath says whether path answers without authentication, as kube-controller-
// manager's --authorization-always-allow-paths default (/healthz, /readyz, /livez;
// kinformer serves no /livez). Only these exact paths: anything else is checked.
func openPath(path string) bool {
	return path == "/healthz" || path == "/readyz"
}

// guard lets through to next only the requests SecureServing's doc allows.
func (r *reviewer) guard(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if openPath(req.URL.Path) {
			next.ServeHTTP(w, req)
			return
		}
		token, ok := bearerToken(req.Header.Get("Authorization"))
		if !ok {
			unauthorized(w)
			return
		}
		ctx := req.Context()
		a, err := r.authenticate(ctx, token)
		if err != nil {
			if ctx.Err() == nil { // not a caller that went away
				log.Warn("cannot authenticate a request", "path", req.URL.Path, "remote", req.RemoteAddr, "err", err)
			}
			unauthorized(w)
			return
		}
		if !a.authenticated {
			unauthorized(w)
			return
		}
		// As the apiserver names the verbs of non-resource URLs: the method in lower case.
		verb := strings.ToLower(req.Method)
		z, err := r.authorize(ctx, a.user, verb, req.URL.Path)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("cannot authorize a request", "user", a.user.Username, "path", req.URL.Path, "err", err)
			}
			http.Error(w, "Internal Server Error: the authorization check failed", http.StatusInternalServerError)
			return
		}
		if !z.allowed {
			msg := fmt.Sprintf("forbidden: User %q cannot %s path %q", a.user.Username, verb, req.URL.Path)
			if z.reason != "" {
				msg += ": " + z.reason
			}
			http.Error(w, msg, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, req)
	})
}

// bearerToken reads "Bearer TOKEN" (the scheme in any case, as the apiserver reads it).
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", "Bearer")
	http.Error(w, "Unauthorized", http.StatusUnauthorized)
}
