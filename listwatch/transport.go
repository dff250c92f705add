package listwatch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// tlsConfig builds the client TLS configuration: server verification on unless Insecure,
// the configured CA, and the client certificate (static, or from an exec plugin on each
// handshake so a refreshed certificate is picked up).
func tlsConfig(cfg *Config, exec *execProvider) (*tls.Config, error) {
	tc := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: cfg.TLS.Insecure, //nolint:gosec // only when the kubeconfig asks for it
		ServerName:         cfg.TLS.ServerName,
	}
	if len(cfg.TLS.CAData) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.TLS.CAData) {
			return nil, fmt.Errorf("the certificate authority data holds no PEM certificate")
		}
		tc.RootCAs = pool
	}
	if len(cfg.TLS.CertData) > 0 {
		cert, err := tls.X509KeyPair(cfg.TLS.CertData, cfg.TLS.KeyData)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	} else if exec != nil {
		tc.GetClientCertificate = func(info *tls.CertificateRequestInfo) (*tls.Certificate, error) {
			// The handshake's context: a plugin that hangs ends with the request.
			_, cert, err := exec.credential(info.Context())
			if err != nil || cert == nil {
				return &tls.Certificate{}, err
			}
			return cert, nil
		}
	}
	return tc, nil
}

// newTransport builds the HTTP transport: HTTP/2 with ping health checks over TLS (one
// connection multiplexes every watch), HTTP/1.1 chunked streams otherwise.
func newTransport(cfg *Config, tc *tls.Config) (*http.Transport, error) {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dialer.DialContext,
		TLSClientConfig:     tc,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 25,
		IdleConnTimeout:     90 * time.Second,
	}
	// The protocols are set explicitly: a transport with its own dialer and TLS config
	// would otherwise not attempt HTTP/2 at all.
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP1(true)
	if !cfg.DisableHTTP2 {
		t.Protocols.SetHTTP2(true)
		t.HTTP2 = &http.HTTP2Config{
			SendPingTimeout: orDefault(cfg.HTTP2ReadIdleTimeout, 30*time.Second),
			PingTimeout:     orDefault(cfg.HTTP2PingTimeout, 15*time.Second),
		}
	}
	return t, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// authenticator adds the Authorization header: a static token, a token file (re-read at
// most once a minute) or an exec plugin's token.
type authenticator struct {
	token     string
	tokenFile string
	exec      *execProvider

	mu        sync.Mutex
	fileToken string
	readAt    time.Time
}

func (a *authenticator) header(ctx context.Context) (string, error) {
	switch {
	case a.token != "":
		return "Bearer " + a.token, nil
	case a.tokenFile != "":
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.fileToken == "" || time.Since(a.readAt) > time.Minute {
			b, err := os.ReadFile(a.tokenFile)
			if err != nil {
				return "", fmt.Errorf("reading token file: %w", err)
			}
			a.fileToken, a.readAt = strings.TrimSpace(string(b)), time.Now()
		}
		return "Bearer " + a.fileToken, nil
	case a.exec != nil:
		tok, _, err := a.exec.credential(ctx)
		if err != nil || tok == "" {
			return "", err
		}
		return "Bearer " + tok, nil
	}
	return "", nil
}

// unauthorized is called after the server answered 401 to a request sent with the
// Authorization header sent: it drops credentials that may have been rotated, and
// reports whether a retry may succeed.
func (a *authenticator) unauthorized(sent string) bool {
	switch {
	case a.exec != nil && a.token == "" && a.tokenFile == "":
		a.exec.rejected(strings.TrimPrefix(sent, "Bearer "))
		return true
	case a.tokenFile != "":
		a.mu.Lock()
		a.fileToken = ""
		a.mu.Unlock()
		return true
	}
	return false
}

// redactCredential removes the credential of the Authorization header sent from an error
// body: a proxy or a debugging server may echo the request's headers back, and the body
// ends up in an error, a sync status and a log line.
func redactCredential(body []byte, sent string) []byte {
	_, cred, ok := strings.Cut(sent, " ")
	if !ok || cred == "" {
		return body
	}
	return bytes.ReplaceAll(body, []byte(cred), []byte(redactedText))
}

// explainTLS adds to a failed verification of the server's certificate what a user
// needs to fix it: which authority signed the server's certificate and which ones it was
// checked against. The server's host:port is in the message of the request around it.
func explainTLS(err error, cfg *Config) error {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	switch {
	case errors.As(err, &unknown) && unknown.Cert != nil:
		return fmt.Errorf("%w (the server's certificate is issued by %q; %s)", err, unknown.Cert.Issuer, trustedCAs(cfg))
	case errors.As(err, &hostname):
		return fmt.Errorf("%w (if the certificate is right but names the server differently, set tls-server-name in the kubeconfig's cluster)", err)
	}
	return err
}

// trustedCAs says which certificate authorities the client trusts.
func trustedCAs(cfg *Config) string {
	if len(cfg.TLS.CAData) == 0 {
		return "the configuration names no certificate-authority, so it was checked against the system's trusted authorities"
	}
	var names []string
	for rest := cfg.TLS.CAData; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if cert, err := x509.ParseCertificate(block.Bytes); err == nil {
			names = append(names, strconv.Quote(cert.Subject.String()))
		}
	}
	return "the configured certificate-authority trusts only " + strings.Join(names, ", ")
}
