package listwatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kinformer/kinformer/object"
)

// Client talks to one apiserver: it builds URLs, authenticates, limits its request rate,
// retries what the server asks it to retry, and turns error responses into
// *object.StatusError. It is safe for concurrent use.
type Client struct {
	cfg        Config
	base       *url.URL
	http       *http.Client
	auth       *authenticator
	limiter    *tokenBucket // nil: unlimited
	maxRetries int
	userAgent  string
	transport  *http.Transport // its TLS and dialer serve the websocket watch too

	disco   *discoveryCache
	reading readAhead // how its watches and lists are read (see prefetcher)
	guard   Guard     // nil: none (see WithGuard)
}

// New builds a Client from cfg.
func New(cfg *Config) (*Client, error) {
	base, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	var exec *execProvider
	if cfg.Exec != nil {
		if err := cfg.Exec.validate(); err != nil {
			return nil, err
		}
		exec = newExecProvider(cfg.Exec, cfg.Host, cfg.ExecTimeout)
	}
	tc, err := tlsConfig(cfg, exec)
	if err != nil {
		return nil, err
	}
	transport, err := newTransport(cfg, tc)
	if err != nil {
		return nil, err
	}
	c := &Client{
		disco:      &discoveryCache{},
		reading:    defaultReadAhead(newBatchPool()),
		cfg:        *cfg,
		base:       base,
		http:       &http.Client{Transport: transport},
		transport:  transport,
		auth:       &authenticator{token: cfg.BearerToken, tokenFile: cfg.BearerTokenFile, exec: exec},
		maxRetries: cfg.MaxRetries,
		userAgent:  cfg.UserAgent,
	}
	if c.maxRetries == 0 {
		c.maxRetries = DefaultMaxRetries
	}
	if c.userAgent == "" {
		c.userAgent = "kinformer"
	}
	switch {
	case cfg.QPS > 0:
		c.limiter = newTokenBucket(cfg.QPS, cfg.Burst)
	case cfg.QPS == 0:
		burst := cfg.Burst
		if burst == 0 {
			burst = DefaultBurst
		}
		c.limiter = newTokenBucket(DefaultQPS, burst)
	}
	return c, nil
}

// Format prints the client as the server it talks to, whatever the verb. Its fields hold
// credentials, and fmt prints unexported fields without calling their own methods, so
// the Config's redaction would be bypassed.
func (c *Client) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "listwatch.Client{Host: %s}", c.base.Redacted())
}

// Config returns the configuration the client was built from.
func (c *Client) Config() Config { return c.cfg }

// CloseIdleConnections releases pooled connections (call it when done with the client).
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// request is one API call.
type request struct {
	method      string
	path        string
	query       url.Values
	body        []byte
	contentType string
	accept      string // "" means application/json
}

func (c *Client) url(path string, query url.Values) string {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = query.Encode()
	return u.String()
}

// do performs a non-watch request and returns the body of its 2xx answer, read whole.
func (c *Client) do(ctx context.Context, r request) ([]byte, error) {
	body, _, err := c.doTyped(ctx, r)
	return body, err
}

// doTyped is do, returning the answer's Content-Type too.
func (c *Client) doTyped(ctx context.Context, r request) (body []byte, contentType string, err error) {
	err = c.doRead(ctx, r, func(ct string, resp io.Reader) error {
		var err error
		if body, err = io.ReadAll(resp); err != nil {
			return fmt.Errorf("%s %s: reading response: %w", r.method, r.path, err)
		}
		contentType = ct
		return nil
	})
	return body, contentType, err
}

// doRead performs a non-watch request and has read consume the body of its 2xx answer as
// it arrives: a list page can be far larger than any object in it, and must not be held
// whole on top of its decoded objects. It waits for the rate limiter, applies
// Config.Timeout to the request and the read, and retries as send does.
func (c *Client) doRead(ctx context.Context, r request, read func(contentType string, body io.Reader) error) error {
	if c.limiter != nil {
		if err := c.limiter.Wait(ctx); err != nil {
			return err
		}
	}
	if c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	resp, err := c.send(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return read(resp.Header.Get("Content-Type"), resp.Body)
}

// send performs r, retrying as the server directs, and returns a 2xx response with its
// body unread, or an error (a *object.StatusError for error answers). A 401 is retried
// once, after dropping the credential the server rejected (an exec plugin then runs
// again, a token file is read again).
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	retriedAuth := false
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, r.method, c.url(r.path, r.query), bytes.NewReader(r.body))
		if err != nil {
			return nil, err
		}
		if err := c.setHeaders(ctx, req.Header); err != nil {
			return nil, err
		}
		if r.accept != "" {
			req.Header.Set("Accept", r.accept)
		}
		if r.contentType != "" {
			req.Header.Set("Content-Type", r.contentType)
		}
		// Asked at every attempt, just before it goes: the moment that counts for a
		// process that may have been frozen since the request was made.
		req, done, cancel, err := c.admit(req, r)
		if err != nil {
			return nil, err
		}
		resp, err := c.http.Do(req)
		done()
		if err != nil {
			cancel()
			switch {
			case ctx.Err() != nil:
				return nil, ctx.Err()
			case req.Context().Err() != nil:
				return nil, fmt.Errorf("%s %s: not answered while its guard allowed it: %w", r.method, r.path, req.Context().Err())
			}
			return nil, c.requestError(r, err)
		}
		resp.Body = cancelOnClose{resp.Body, cancel}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		sent := req.Header.Get("Authorization")
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		serr := statusFromResponse(resp, redactCredential(body, sent))
		if resp.StatusCode == http.StatusUnauthorized && !retriedAuth && c.auth.unauthorized(sent) {
			retriedAuth = true
			continue
		}
		wait, retry := retryDelay(resp.StatusCode, serr)
		if !retry || attempt >= c.maxRetries || c.maxRetries < 0 {
			return nil, serr
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
}

// requestError describes a request that got no answer: the method and URL (so the
// server's host:port), then the cause, with what to check when it is the server's
// certificate. The *url.Error of the HTTP client is unwrapped: it would repeat the URL.
func (c *Client) requestError(r request, err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return fmt.Errorf("%s %s: %w", r.method, c.url(r.path, r.query), explainTLS(err, &c.cfg))
}

func (c *Client) setHeaders(ctx context.Context, h http.Header) error {
	h.Set("Accept", "application/json")
	h.Set("User-Agent", c.userAgent)
	auth, err := c.auth.header(ctx)
	if err != nil {
		return err
	}
	if auth != "" {
		h.Set("Authorization", auth)
	}
	return nil
}

// retryDelay says whether and when to retry: always for 429 (1 s without a hint), and for
// 5xx only when the server sent Retry-After (it is then known to be transient).
func retryDelay(code int, serr *object.StatusError) (time.Duration, bool) {
	d, hinted := object.RetryAfter(serr)
	switch {
	case code == http.StatusTooManyRequests && !hinted:
		return time.Second, true
	case code == http.StatusTooManyRequests, code >= 500 && hinted:
		return d, true
	}
	return 0, false
}

// statusFromResponse turns an error answer into a StatusError: the body's Status when it
// has one, else a Status made from the code and the body's text.
func statusFromResponse(resp *http.Response, body []byte) *object.StatusError {
	s, ok := protobufStatus(body)
	if !ok && (json.Unmarshal(body, &s) != nil || s.Kind != "Status") {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 256 {
			msg = msg[:256] + "..."
		}
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		s = object.Status{Status: "Failure", Message: msg, Code: int32(resp.StatusCode), Reason: reasonForCode(resp.StatusCode)}
	}
	if s.Code == 0 {
		s.Code = int32(resp.StatusCode)
	}
	se := &object.StatusError{Status: s}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs >= 0 {
		se.RetryAfter = time.Duration(secs) * time.Second
	}
	return se
}

func reasonForCode(code int) object.StatusReason {
	switch code {
	case http.StatusNotFound:
		return object.ReasonNotFound
	case http.StatusConflict:
		return object.ReasonConflict
	case http.StatusGone:
		return object.ReasonGone
	case http.StatusTooManyRequests:
		return object.ReasonTooManyRequests
	case http.StatusForbidden:
		return object.ReasonForbidden
	case http.StatusUnauthorized:
		return object.ReasonUnauthorized
	case http.StatusUnprocessableEntity:
		return object.ReasonInvalid
	case http.StatusBadRequest:
		return object.ReasonBadRequest
	case http.StatusMethodNotAllowed:
		return object.ReasonMethodNotAllowed
	case http.StatusGatewayTimeout:
		return object.ReasonTimeout
	}
	return object.ReasonInternalError
}

// ServerVersion asks the apiserver for /version and reports its gitVersion and the HTTP
// protocol the connection uses ("HTTP/2.0" over TLS unless DisableHTTP2 is set).
func (c *Client) ServerVersion(ctx context.Context) (version, proto string, err error) {
	resp, err := c.send(ctx, request{method: http.MethodGet, path: "/version"})
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v); err != nil {
		return "", resp.Proto, fmt.Errorf("GET /version: %w", err)
	}
	return v.GitVersion, resp.Proto, nil
}
