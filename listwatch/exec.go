package listwatch

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// ExecConfig is a kubeconfig user's exec: credential plugin. Printed, it shows the
// command and the names of its environment variables; arguments and values, where
// plugins take secrets, are redacted.
type ExecConfig struct {
	APIVersion         string       `yaml:"apiVersion"`
	Command            string       `yaml:"command"`
	Args               []string     `yaml:"args"`
	Env                []ExecEnvVar `yaml:"env"`
	InstallHint        string       `yaml:"installHint"`
	ProvideClusterInfo bool         `yaml:"provideClusterInfo"`
	InteractiveMode    string       `yaml:"interactiveMode"`
}

// ExecEnvVar is one extra environment variable for the plugin.
type ExecEnvVar struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

// The versions of the exec credential protocol a plugin may speak. They differ in what
// the kubeconfig must say (v1 requires interactiveMode), not in what is exchanged.
const (
	execAPIVersion        = "client.authentication.k8s.io/v1"
	execAPIVersionV1beta1 = "client.authentication.k8s.io/v1beta1"
)

func (e *ExecConfig) validate() error {
	if e.Command == "" {
		return fmt.Errorf("exec credential plugin has no command")
	}
	if e.APIVersion != execAPIVersion && e.APIVersion != execAPIVersionV1beta1 {
		return fmt.Errorf("exec credential plugin apiVersion %q is not supported (want %s or %s)", e.APIVersion, execAPIVersion, execAPIVersionV1beta1)
	}
	if e.InteractiveMode == "Always" {
		return fmt.Errorf("exec credential plugin wants interactiveMode Always; kinformer never has a terminal")
	}
	return nil
}

// Format prints e with its arguments and environment values redacted.
func (e ExecConfig) Format(f fmt.State, verb rune) {
	type execConfig ExecConfig // the same fields without this method
	r := execConfig(e)
	if len(e.Args) > 0 {
		r.Args = []string{fmt.Sprintf("%s %d args", redactedText, len(e.Args))}
	}
	r.Env = make([]ExecEnvVar, len(e.Env))
	for i, v := range e.Env {
		r.Env[i] = ExecEnvVar{Name: v.Name, Value: redact(v.Value)}
	}
	printRedacted(f, verb, r)
}

// execCredential is what a plugin prints.
type execCredential struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Status     *struct {
		Token                 string `json:"token"`
		ClientCertificateData string `json:"clientCertificateData"`
		ClientKeyData         string `json:"clientKeyData"`
		ExpirationTimestamp   string `json:"expirationTimestamp"`
	} `json:"status"`
}

// execProvider runs the plugin when there is no valid credential and caches the result
// until it expires or the server rejects it (401).
type execProvider struct {
	cfg     *ExecConfig
	server  string
	now     func() time.Time
	timeout time.Duration // of one run

	mu      sync.Mutex
	token   string
	cert    *tls.Certificate
	expires time.Time // zero: until rejected
	valid   bool
}

// DefaultExecTimeout is how long an exec credential plugin may run: ample for a
// plugin that fetches a token over a network, short enough to notice one that hangs.
const DefaultExecTimeout = time.Minute

func newExecProvider(cfg *ExecConfig, server string, timeout time.Duration) *execProvider {
	if timeout <= 0 {
		timeout = DefaultExecTimeout
	}
	return &execProvider{cfg: cfg, server: server, now: time.Now, timeout: timeout}
}

// credential returns the cached credential, running the plugin first when needed.
func (p *execProvider) credential(ctx context.Context) (string, *tls.Certificate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.valid && (p.expires.IsZero() || p.now().Before(p.expires)) {
		return p.token, p.cert, nil
	}
	if err := p.refresh(ctx); err != nil {
		return "", nil, err
	}
	return p.token, p.cert, nil
}

// invalidate drops the cached credential, so the next request runs the plugin.
func (p *execProvider) invalidate() {
	p.mu.Lock()
	p.valid = false
	p.mu.Unlock()
}

// rejected is told that the server answered 401 to token, and drops the cached
// credential if it is that token. When the cache already holds another one, the request
// was sent before a refresh: running the plugin again for it would run it once more for
// every request in flight when a token expires.
func (p *execProvider) rejected(token string) {
	p.mu.Lock()
	if p.token == token {
		p.valid = false
	}
	p.mu.Unlock()
}

func (p *execProvider) refresh(ctx context.Context) error {
	spec := map[string]any{"interactive": false}
	if p.cfg.ProvideClusterInfo {
		spec["cluster"] = map[string]any{"server": p.server}
	}
	// The plugin answers in the version it is asked in, which is the kubeconfig's.
	infoJSON, _ := json.Marshal(map[string]any{"apiVersion": p.cfg.APIVersion, "kind": "ExecCredential", "spec": spec})
	runCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, p.cfg.Command, p.cfg.Args...)
	cmd.Env = append(os.Environ(), "KUBERNETES_EXEC_INFO="+string(infoJSON))
	for _, e := range p.cfg.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	// Once ctx ends and the plugin is killed, a child it left holding stdout must not
	// keep Run waiting.
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() == nil && errors.Is(runCtx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("exec credential plugin %q did not answer within %s (listwatch.Config.ExecTimeout); it was stopped",
				p.cfg.Command, p.timeout)
		}
		msg := scrubCredentials(stderr.String(), p.token)
		if p.cfg.InstallHint != "" {
			msg += "\n" + p.cfg.InstallHint
		}
		return fmt.Errorf("exec credential plugin %q: %w: %s", p.cfg.Command, err, msg)
	}
	var cred execCredential
	if err := json.Unmarshal(stdout.Bytes(), &cred); err != nil {
		return fmt.Errorf("exec credential plugin %q printed no ExecCredential: %w", p.cfg.Command, err)
	}
	if cred.APIVersion != p.cfg.APIVersion || cred.Kind != "ExecCredential" || cred.Status == nil {
		return fmt.Errorf("exec credential plugin %q printed %s %s without status; want %s ExecCredential", p.cfg.Command, cred.APIVersion, cred.Kind, p.cfg.APIVersion)
	}
	st := cred.Status
	var cert *tls.Certificate
	if st.ClientCertificateData != "" || st.ClientKeyData != "" {
		c, err := tls.X509KeyPair([]byte(st.ClientCertificateData), []byte(st.ClientKeyData))
		if err != nil {
			return fmt.Errorf("exec credential plugin %q: client certificate: %w", p.cfg.Command, err)
		}
		cert = &c
	}
	if st.Token == "" && cert == nil {
		return fmt.Errorf("exec credential plugin %q returned neither a token nor a client certificate", p.cfg.Command)
	}
	var expires time.Time
	if st.ExpirationTimestamp != "" {
		t, err := time.Parse(time.RFC3339, st.ExpirationTimestamp)
		if err != nil {
			return fmt.Errorf("exec credential plugin %q: expirationTimestamp: %w", p.cfg.Command, err)
		}
		expires = t
	}
	p.token, p.cert, p.expires, p.valid = st.Token, cert, expires, true
	return nil
}

// maxPluginMessage bounds how much of a failing plugin's stderr goes into the error.
const maxPluginMessage = 1024

// scrubCredentials prepares a failing plugin's stderr for an error message. That text is
// the plugin's only way to say why it failed ("run aws sso login"), so it is kept; but
// plugins also print debugging output that may hold the credential they were about to
// return, which this process never saw. So every word shaped like a credential — a long
// run of base64 or hex characters mixing letters and digits, as tokens, JWTs and PEM
// lines are — is replaced, and so are the known secrets given.
func scrubCredentials(text string, known ...string) string {
	for _, k := range known {
		if k != "" {
			text = strings.ReplaceAll(text, k, redactedText)
		}
	}
	var b strings.Builder
	word := -1 // start of the current run of credential characters
	flush := func(end int) {
		if word >= 0 {
			if w := text[word:end]; looksLikeCredential(w) {
				b.WriteString(redactedText)
			} else {
				b.WriteString(w)
			}
			word = -1
		}
	}
	for i := 0; i < len(text); i++ {
		if isCredentialChar(text[i]) {
			if word < 0 {
				word = i
			}
			continue
		}
		flush(i)
		b.WriteByte(text[i])
	}
	flush(len(text))
	out := strings.TrimSpace(b.String())
	if len(out) > maxPluginMessage {
		out = out[:maxPluginMessage] + "..."
	}
	return out
}

// isCredentialChar reports whether c belongs to the alphabets credentials are written
// in: base64 (standard and URL), hex, and the dots of a JWT.
func isCredentialChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("+/=-_.~", c) >= 0
}

// looksLikeCredential: long enough to be a secret, and mixing letters and digits as
// random strings do and words, paths and flags rarely do.
func looksLikeCredential(w string) bool {
	if len(w) < 20 {
		return false
	}
	return strings.ContainsAny(w, "0123456789") && strings.ContainsFunc(w, func(r rune) bool {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	})
}
