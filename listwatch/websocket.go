package listwatch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/kinformer/kinformer/clock"
)

// wsSource reads watch events from a websocket: the apiserver sends each event as one
// text message.
type wsSource struct {
	conn      *websocket.Conn
	stop      func() bool // unregisters the close-on-cancel hook
	closeOnce sync.Once
	offset    int64 // bytes of message payload read so far
}

// next reads one message as ReadMessage does, in its two steps: NextReader returns once
// the message's header is in, which is when its first bytes are (trace.Started).
func (s *wsSource) next(stamp clock.Clock) ([]byte, int64, time.Time, error) {
	for {
		kind, r, err := s.conn.NextReader()
		var started time.Time
		if stamp != nil {
			started = stamp.Now()
		}
		var msg []byte
		if err == nil {
			msg, err = io.ReadAll(r)
		}
		if err != nil {
			if websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				return nil, s.offset, started, io.EOF
			}
			return nil, s.offset, started, err
		}
		at := s.offset
		s.offset += int64(len(msg))
		if kind != websocket.TextMessage && kind != websocket.BinaryMessage {
			continue
		}
		if len(strings.TrimSpace(string(msg))) == 0 {
			continue
		}
		return msg, at, started, nil
	}
}

// pending is false: a websocket message is read whole by next, none is buffered.
func (s *wsSource) pending() bool { return false }

// validated is false: a message is checked by the decoder.
func (s *wsSource) validated() bool { return false }

func (s *wsSource) close() error {
	var err error
	s.closeOnce.Do(func() {
		s.stop()
		err = s.conn.Close()
	})
	return err
}

// openWebSocket upgrades the watch URL to a websocket. kube-apiserver refuses the upgrade
// with 403 unless the request carries an Origin header, whatever its value.
func (c *Client) openWebSocket(ctx context.Context, path string, opts WatchOptions, accept string) (frameSource, error) {
	u := *c.base
	u.Scheme = map[string]string{"http": "ws", "https": "wss"}[u.Scheme]
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = opts.query().Encode()
	// The transport's TLS config offers "h2" by ALPN; a websocket needs HTTP/1.1.
	tc := c.transport.TLSClientConfig.Clone()
	tc.NextProtos = []string{"http/1.1"}
	d := &websocket.Dialer{
		NetDialContext:   c.transport.DialContext,
		TLSClientConfig:  tc,
		HandshakeTimeout: c.transport.TLSHandshakeTimeout,
		Proxy:            c.transport.Proxy,
	}
	conn, err := c.dialWebSocket(ctx, d, &u, accept)
	if err != nil {
		return nil, err
	}
	max := opts.MaxFrameSize
	if max <= 0 {
		max = DefaultMaxFrameSize
	}
	conn.SetReadLimit(int64(max))
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	return &wsSource{conn: conn, stop: stop}, nil
}

// dialWebSocket performs the upgrade, retrying a 401 once with a fresh credential as
// Client.send does. An error answer becomes an *object.StatusError; a failure to
// connect names the URL, so the server's host:port, and explains a refused certificate.
func (c *Client) dialWebSocket(ctx context.Context, d *websocket.Dialer, u *url.URL, accept string) (*websocket.Conn, error) {
	for retriedAuth := false; ; retriedAuth = true {
		h := http.Header{}
		if err := c.setHeaders(ctx, h); err != nil {
			return nil, err
		}
		h.Set("Origin", c.base.Scheme+"://"+c.base.Host)
		if accept != "" {
			h.Set("Accept", accept)
		}
		conn, resp, err := d.DialContext(ctx, u.String(), h)
		if err == nil {
			return conn, nil
		}
		if resp == nil || resp.StatusCode == http.StatusSwitchingProtocols {
			return nil, fmt.Errorf("websocket watch %s: %w", u.Redacted(), explainTLS(err, &c.cfg))
		}
		sent := h.Get("Authorization")
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized && !retriedAuth && c.auth.unauthorized(sent) {
			continue
		}
		return nil, statusFromResponse(resp, redactCredential(body, sent))
	}
}
