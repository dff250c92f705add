package listwatch

import (
	"fmt"
	"net/url"
	"time"
)

// Config says how to reach and authenticate to an apiserver. Build one with
// LoadKubeconfig, InClusterConfig, or by hand (the simulator writes a kubeconfig too).
type Config struct {
	// Host is the apiserver's base URL, e.g. https://127.0.0.1:6443.
	Host string
	// Namespace is the default namespace of the selected context ("" means "default").
	Namespace string

	// BearerToken is sent as "Authorization: Bearer ...". BearerTokenFile, when set, is
	// re-read at most once a minute, because projected service-account tokens rotate.
	BearerToken     string
	BearerTokenFile string
	// Exec runs a client.authentication.k8s.io/v1 credential plugin.
	Exec *ExecConfig

	TLS TLSConfig

	// QPS and Burst bound non-watch requests with a token bucket. Zero picks the defaults
	// (DefaultQPS, DefaultBurst); a negative QPS disables the limit.
	QPS   float64
	Burst int
	// Timeout bounds each non-watch request; zero means no limit beyond the context.
	Timeout time.Duration
	// MaxRetries is how many times a request answered 429 (or 5xx with Retry-After) is
	// retried after the server's delay. Zero picks DefaultMaxRetries; negative disables.
	MaxRetries int

	// HTTP2ReadIdleTimeout sends a ping on an HTTP/2 connection that has been silent this
	// long; HTTP2PingTimeout closes it when the ping gets no answer. Together they find
	// a connection a load balancer dropped without a word. Zero picks 30 s and 15 s.
	HTTP2ReadIdleTimeout time.Duration
	HTTP2PingTimeout     time.Duration
	// DisableHTTP2 forces HTTP/1.1 (chunked watch streams) even over TLS.
	DisableHTTP2 bool

	// UserAgent is sent with every request; empty picks "kinformer".
	UserAgent string
}

// TLSConfig holds the TLS material of a cluster and user as PEM (files named in a
// kubeconfig are read when it is loaded).
type TLSConfig struct {
	CAData   []byte
	CertData []byte
	KeyData  []byte
	// Insecure skips server certificate verification (insecure-skip-tls-verify).
	Insecure bool
	// ServerName overrides the name checked in the server's certificate.
	ServerName string
}

// Defaults for Config's zero values. client-go defaults to 5 QPS / burst 10, which makes a
// controller starting against thousands of objects crawl; these leave room while still
// protecting the server from a hot loop.
const (
	DefaultQPS        = 50
	DefaultBurst      = 100
	DefaultMaxRetries = 10
)

func (c *Config) validate() (*url.URL, error) {
	if c.Host == "" {
		return nil, fmt.Errorf("no apiserver host in the configuration")
	}
	u, err := url.Parse(c.Host)
	if err != nil {
		return nil, fmt.Errorf("invalid apiserver host %q: %w", c.Host, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid apiserver host %q: scheme must be http or https", c.Host)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid apiserver host %q: no host", c.Host)
	}
	return u, nil
}
