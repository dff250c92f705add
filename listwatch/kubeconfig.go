package listwatch

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Kubeconfig is the parsed form of a kubeconfig file (or several merged).
type Kubeconfig struct {
	CurrentContext string
	Clusters       map[string]*KubeCluster
	Users          map[string]*KubeUser
	Contexts       map[string]*KubeContext
}

// KubeCluster is one entry of clusters:. File paths are already absolute.
type KubeCluster struct {
	Server                   string `yaml:"server"`
	CertificateAuthority     string `yaml:"certificate-authority"`
	CertificateAuthorityData string `yaml:"certificate-authority-data"`
	InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
	TLSServerName            string `yaml:"tls-server-name"`
}

// KubeUser is one entry of users:. Printed, its secrets are redacted.
type KubeUser struct {
	Token                 string      `yaml:"token"`
	TokenFile             string      `yaml:"tokenFile"`
	ClientCertificate     string      `yaml:"client-certificate"`
	ClientCertificateData string      `yaml:"client-certificate-data"`
	ClientKey             string      `yaml:"client-key"`
	ClientKeyData         string      `yaml:"client-key-data"`
	Exec                  *ExecConfig `yaml:"exec"`
	AuthProvider          *struct {
		Name string `yaml:"name"`
	} `yaml:"auth-provider"`
	// Username and Password are basic authentication, which kube-apiserver dropped in
	// 1.19: a user that has a password is refused rather than silently sent anonymous.
	Username string `yaml:"username"`
	Password string `yaml:"password"`
}

// Format prints u with its token, key and password redacted.
func (u KubeUser) Format(f fmt.State, verb rune) {
	type kubeUser KubeUser // the same fields without this method
	r := kubeUser(u)
	r.Token, r.ClientKeyData, r.Password = redact(u.Token), redact(u.ClientKeyData), redact(u.Password)
	printRedacted(f, verb, r)
}

// KubeContext is one entry of contexts:.
type KubeContext struct {
	Cluster   string `yaml:"cluster"`
	User      string `yaml:"user"`
	Namespace string `yaml:"namespace"`
}

type kubeconfigFile struct {
	CurrentContext string `yaml:"current-context"`
	Clusters       []struct {
		Name    string       `yaml:"name"`
		Cluster *KubeCluster `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string    `yaml:"name"`
		User *KubeUser `yaml:"user"`
	} `yaml:"users"`
	Contexts []struct {
		Name    string       `yaml:"name"`
		Context *KubeContext `yaml:"context"`
	} `yaml:"contexts"`
}

// ParseKubeconfig parses one kubeconfig document. Relative file paths in it are resolved
// against dir, as kubectl resolves them against the file's own directory.
func ParseKubeconfig(data []byte, dir string) (*Kubeconfig, error) {
	var f kubeconfigFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parsing kubeconfig: %w", err)
	}
	kc := &Kubeconfig{CurrentContext: f.CurrentContext,
		Clusters: map[string]*KubeCluster{}, Users: map[string]*KubeUser{}, Contexts: map[string]*KubeContext{}}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) || dir == "" {
			return p
		}
		return filepath.Join(dir, p)
	}
	for _, c := range f.Clusters {
		if c.Name == "" || c.Cluster == nil {
			return nil, fmt.Errorf("parsing kubeconfig: a cluster entry needs a name and a cluster")
		}
		c.Cluster.CertificateAuthority = abs(c.Cluster.CertificateAuthority)
		if _, dup := kc.Clusters[c.Name]; !dup {
			kc.Clusters[c.Name] = c.Cluster
		}
	}
	for _, u := range f.Users {
		if u.Name == "" {
			return nil, fmt.Errorf("parsing kubeconfig: a user entry needs a name")
		}
		if u.User == nil {
			u.User = &KubeUser{}
		}
		u.User.TokenFile = abs(u.User.TokenFile)
		u.User.ClientCertificate = abs(u.User.ClientCertificate)
		u.User.ClientKey = abs(u.User.ClientKey)
		if u.User.Exec != nil && strings.ContainsRune(u.User.Exec.Command, filepath.Separator) {
			u.User.Exec.Command = abs(u.User.Exec.Command)
		}
		if _, dup := kc.Users[u.Name]; !dup {
			kc.Users[u.Name] = u.User
		}
	}
	for _, c := range f.Contexts {
		if c.Name == "" || c.Context == nil {
			return nil, fmt.Errorf("parsing kubeconfig: a context entry needs a name and a context")
		}
		if _, dup := kc.Contexts[c.Name]; !dup {
			kc.Contexts[c.Name] = c.Context
		}
	}
	return kc, nil
}

// merge adds other's entries that kc lacks: with several files the first to define a name
// wins, and the first non-empty current-context wins, as kubectl merges KUBECONFIG.
func (kc *Kubeconfig) merge(other *Kubeconfig) {
	if kc.CurrentContext == "" {
		kc.CurrentContext = other.CurrentContext
	}
	for k, v := range other.Clusters {
		if _, ok := kc.Clusters[k]; !ok {
			kc.Clusters[k] = v
		}
	}
	for k, v := range other.Users {
		if _, ok := kc.Users[k]; !ok {
			kc.Users[k] = v
		}
	}
	for k, v := range other.Contexts {
		if _, ok := kc.Contexts[k]; !ok {
			kc.Contexts[k] = v
		}
	}
}

// LoadOptions chooses which kubeconfig files and context to use.
type LoadOptions struct {
	// Path is an explicit file (--kubeconfig); it must exist and wins over KUBECONFIG.
	Path string
	// Context overrides current-context (--context).
	Context string
	// Getenv and Home replace os.Getenv and the home directory, for tests.
	Getenv func(string) string
	Home   string
}

// ErrNoKubeconfig is returned when no kubeconfig file can be found.
var ErrNoKubeconfig = errors.New("no kubeconfig: pass --kubeconfig, set KUBECONFIG, or create ~/.kube/config")

// LoadKubeconfig finds and merges kubeconfig files (Path, else every file in the
// KUBECONFIG list that exists, else ~/.kube/config) and builds the Config of the chosen
// context.
func LoadKubeconfig(opts LoadOptions) (*Config, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var paths []string
	mustExist := false
	switch {
	case opts.Path != "":
		paths, mustExist = []string{opts.Path}, true
	case getenv("KUBECONFIG") != "":
		for _, p := range filepath.SplitList(getenv("KUBECONFIG")) {
			if p != "" {
				paths = append(paths, p)
			}
		}
	default:
		home := opts.Home
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		if home != "" {
			paths = []string{filepath.Join(home, ".kube", "config")}
		}
	}
	var merged *Kubeconfig
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) && !mustExist {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading kubeconfig: %w", err)
		}
		kc, err := ParseKubeconfig(data, filepath.Dir(p))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if merged == nil {
			merged = kc
		} else {
			merged.merge(kc)
		}
	}
	if merged == nil {
		return nil, ErrNoKubeconfig
	}
	return merged.Config(opts.Context)
}

// Config builds the client configuration of a context ("" means current-context).
func (kc *Kubeconfig) Config(context string) (*Config, error) {
	if context == "" {
		context = kc.CurrentContext
	}
	if context == "" {
		return nil, fmt.Errorf("kubeconfig has no current-context; choose one with --context")
	}
	ctx, ok := kc.Contexts[context]
	if !ok {
		return nil, fmt.Errorf("kubeconfig has no context %q", context)
	}
	cluster, ok := kc.Clusters[ctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("context %q names cluster %q, which the kubeconfig does not define", context, ctx.Cluster)
	}
	cfg := &Config{Host: cluster.Server, Namespace: ctx.Namespace}
	cfg.TLS.Insecure = cluster.InsecureSkipTLSVerify
	cfg.TLS.ServerName = cluster.TLSServerName
	var err error
	if cfg.TLS.CAData, err = dataOrFile(cluster.CertificateAuthorityData, cluster.CertificateAuthority, "certificate-authority"); err != nil {
		return nil, err
	}
	if ctx.User != "" {
		user, ok := kc.Users[ctx.User]
		if !ok {
			return nil, fmt.Errorf("context %q names user %q, which the kubeconfig does not define", context, ctx.User)
		}
		if user.AuthProvider != nil {
			return nil, fmt.Errorf("user %q: auth-provider %q is not supported; use an exec credential plugin", ctx.User, user.AuthProvider.Name)
		}
		if user.Password != "" {
			return nil, fmt.Errorf("user %q: basic authentication (username and password) is not supported; kube-apiserver removed it in 1.19", ctx.User)
		}
		cfg.BearerToken = user.Token
		cfg.BearerTokenFile = user.TokenFile
		cfg.Exec = user.Exec
		if cfg.TLS.CertData, err = dataOrFile(user.ClientCertificateData, user.ClientCertificate, "client-certificate"); err != nil {
			return nil, err
		}
		if cfg.TLS.KeyData, err = dataOrFile(user.ClientKeyData, user.ClientKey, "client-key"); err != nil {
			return nil, err
		}
		if (cfg.TLS.CertData == nil) != (cfg.TLS.KeyData == nil) {
			return nil, fmt.Errorf("user %q: a client certificate needs a client key and the other way round", ctx.User)
		}
		if cfg.Exec != nil {
			if err := cfg.Exec.validate(); err != nil {
				return nil, fmt.Errorf("user %q: %w", ctx.User, err)
			}
		}
	}
	if _, err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("context %q: %w", context, err)
	}
	return cfg, nil
}

// dataOrFile returns base64-decoded inline data, else the file's content, else nil.
func dataOrFile(data, file, what string) ([]byte, error) {
	if data != "" {
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("%s-data is not valid base64: %w", what, err)
		}
		return b, nil
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", what, err)
		}
		return b, nil
	}
	return nil, nil
}
