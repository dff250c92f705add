package listwatch

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"
)

// ExecConfig is a kubeconfig user's exec: credential plugin.
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

const execAPIVersion = "client.authentication.k8s.io/v1"

func (e *ExecConfig) validate() error {
	if e.Command == "" {
		return fmt.Errorf("exec credential plugin has no command")
	}
	if e.APIVersion != execAPIVersion {
		return fmt.Errorf("exec credential plugin apiVersion %q is not supported (want %s)", e.APIVersion, execAPIVersion)
	}
	if e.InteractiveMode == "Always" {
		return fmt.Errorf("exec credential plugin wants interactiveMode Always; kinformer never has a terminal")
	}
	return nil
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
	cfg    *ExecConfig
	server string
	now    func() time.Time

	mu      sync.Mutex
	token   string
	cert    *tls.Certificate
	expires time.Time // zero: until rejected
	valid   bool
}

func newExecProvider(cfg *ExecConfig, server string) *execProvider {
	return &execProvider{cfg: cfg, server: server, now: time.Now}
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

// invalidate drops the cached credential after a 401, so the next request runs the plugin.
func (p *execProvider) invalidate() {
	p.mu.Lock()
	p.valid = false
	p.mu.Unlock()
}

func (p *execProvider) refresh(ctx context.Context) error {
	info := map[string]any{"apiVersion": execAPIVersion, "kind": "ExecCredential",
		"spec": map[string]any{"interactive": false}}
	if p.cfg.ProvideClusterInfo {
		info["spec"].(map[string]any)["cluster"] = map[string]any{"server": p.server}
	}
	infoJSON, _ := json.Marshal(info)
	cmd := exec.CommandContext(ctx, p.cfg.Command, p.cfg.Args...)
	cmd.Env = append(os.Environ(), "KUBERNETES_EXEC_INFO="+string(infoJSON))
	for _, e := range p.cfg.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		hint := ""
		if p.cfg.InstallHint != "" {
			hint = "\n" + p.cfg.InstallHint
		}
		return fmt.Errorf("exec credential plugin %q: %w: %s%s", p.cfg.Command, err, bytes.TrimSpace(stderr.Bytes()), hint)
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
