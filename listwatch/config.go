package listwatch

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
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
	// ExecTimeout bounds one run of the Exec plugin [DefaultExecTimeout]: a plugin that
	// hangs (waiting on a network, or on a login nobody will type) must fail the request
	// with its name and the time it was given, not hold every request behind it.
	ExecTimeout time.Duration

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

	// Encoding is what reads ask the apiserver for: EncodingAuto ("", the default)
	// protobuf for the types that decode from it, EncodingJSON never, EncodingProtobuf
	// protobuf or an error. Writes are JSON, but for an object read in protobuf that
	// carries fields the model does not hold: it is written back in protobuf, intact.
	Encoding Encoding
}

// TLSConfig holds the TLS material of a cluster and user as PEM (files named in a
// kubeconfig are read when it is loaded). Printed, it shows the sizes of the
// certificates and never the key.
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
		// url.Parse's error quotes the whole text, which may hold a password: keep only
		// what went wrong.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("invalid apiserver host %q: %w", redactedHost(c.Host), err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid apiserver host %q: scheme must be http or https", u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid apiserver host %q: no host", u.Redacted())
	}
	// A password in the server URL would be sent as basic authentication, which
	// kube-apiserver no longer accepts, and would be printed wherever the URL is.
	if u.User != nil {
		return nil, fmt.Errorf("invalid apiserver host %q: credentials belong in the kubeconfig user, not in the server URL", u.Redacted())
	}
	return u, nil
}

// Printing a Config — in a log line, an error, a test failure, a debugger — must never
// show a credential. Format, String, GoString and LogValue all print a copy whose secrets
// are replaced by redactedText (an empty secret stays empty, so "no token" still shows).
// TLSConfig and ExecConfig redact themselves the same way.

const redactedText = "[redacted]"

// redact replaces a non-empty secret by redactedText.
func redact(secret string) string {
	if secret == "" {
		return ""
	}
	return redactedText
}

// redactedHost is the server URL with any password in it replaced.
func redactedHost(host string) string {
	u, err := url.Parse(host)
	if err != nil {
		// Unparsable: show only what precedes a possible "user:password@".
		if i := strings.LastIndex(host, "@"); i >= 0 {
			return redactedText + host[i:]
		}
		return host
	}
	return u.Redacted()
}

// Format prints c with its secrets redacted, whatever the verb (%v, %+v, %#v, %s).
func (c Config) Format(f fmt.State, verb rune) {
	// The same fields without the methods, so that printing does not come back here.
	type config Config
	r := config(c)
	r.Host = redactedHost(c.Host)
	r.BearerToken = redact(c.BearerToken)
	printRedacted(f, verb, r)
}

// String is c printed with %+v, secrets redacted.
func (c Config) String() string { return fmt.Sprintf("%+v", c) }

// GoString is c printed with %#v, secrets redacted.
func (c Config) GoString() string { return fmt.Sprintf("%#v", c) }

// LogValue makes slog print c redacted, with any handler (the JSON handler would
// otherwise marshal every field).
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Format prints t with the key redacted and the certificates as their sizes.
func (t TLSConfig) Format(f fmt.State, verb rune) {
	type tlsConfig struct {
		CAData, CertData, KeyData string
		Insecure                  bool
		ServerName                string
	}
	printRedacted(f, verb, tlsConfig{
		CAData: size(t.CAData), CertData: size(t.CertData), KeyData: redact(string(t.KeyData)),
		Insecure: t.Insecure, ServerName: t.ServerName,
	})
}

// printRedacted prints v, an already redacted copy, as %v with the verb's flags (%+v
// names the fields, %#v prints Go syntax); other verbs print as %v too, since %s or %x
// applied field by field print nothing readable.
func printRedacted(f fmt.State, verb rune, v any) {
	format := "%v"
	if verb == 'v' {
		format = fmt.FormatString(f, verb)
	}
	fmt.Fprintf(f, format, v)
}

func size(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return fmt.Sprintf("%d bytes", len(b))
}
