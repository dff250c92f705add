package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Options tune the control plane.
type Options struct {
	// BinDir holds etcd and kube-apiserver; empty means $KINFORMER_BIN_DIR, else
	// ~/.cache/kinformer/bin.
	BinDir string
	// EtcdCompactionInterval is kube-apiserver's --etcd-compaction-interval (0: its default).
	EtcdCompactionInterval time.Duration
	// WatchCacheSizes is --watch-cache-sizes, e.g. "configmaps#0" to serve configmap
	// watches straight from etcd (so compaction shows as 410 on a watch).
	WatchCacheSizes string
	// ExtraArgs are appended to kube-apiserver's flags.
	ExtraArgs []string
	// AuditPolicy, when set, is the text of an audit.k8s.io/v1 Policy: kube-apiserver
	// logs what it selects, as JSON lines, to Cluster.AuditLog in the scratch directory.
	AuditPolicy string
}

// Cluster is a running etcd + kube-apiserver.
type Cluster struct {
	Dir        string // scratch directory: certificates, logs, data, kubeconfig
	URL        string // https://127.0.0.1:PORT
	Token      string // static token of an admin (system:masters)
	Kubeconfig string // path of a kubeconfig for URL and Token
	CAData     []byte
	AuditLog   string // the audit log's path, with Options.AuditPolicy; "" without

	etcd, apiserver *exec.Cmd
	waits           []chan error
	apiBin          string
	apiArgs         []string
}

// BinDir returns where the control-plane binaries are expected.
func BinDir() string {
	if d := os.Getenv("KINFORMER_BIN_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "kinformer", "bin")
}

// ErrNoBinaries means hack/cluster/build.sh has not been run.
var ErrNoBinaries = errors.New("etcd and kube-apiserver are not built: run `make cluster-bin`")

// Start launches etcd and kube-apiserver on free loopback ports and waits until the
// apiserver is ready and the default namespace exists. Call Stop when done.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	bin := opts.BinDir
	if bin == "" {
		bin = BinDir()
	}
	etcdBin, apiBin := filepath.Join(bin, "etcd"), filepath.Join(bin, "kube-apiserver")
	for _, b := range []string{etcdBin, apiBin} {
		if _, err := os.Stat(b); err != nil {
			return nil, fmt.Errorf("%w (%v)", ErrNoBinaries, err)
		}
	}
	dir, err := os.MkdirTemp("", "kinformer-cluster-")
	if err != nil {
		return nil, err
	}
	c = &Cluster{Dir: dir, Token: "kinformer-e2e-admin-token"}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if err := writeCerts(dir); err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	c.CAData, _ = os.ReadFile(filepath.Join(dir, "ca.crt"))
	tokens := c.Token + ",admin,admin-uid,system:masters\n"
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	c.etcd, err = c.launch(etcdBin, "etcd.log",
		"--name=kinformer", "--data-dir="+filepath.Join(dir, "etcd-data"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=kinformer="+peerURL, "--log-level=warn", "--unsafe-no-fsync")
	if err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, http.DefaultClient, etcdURL+"/health", "", c.waits[0]); err != nil {
		return nil, fmt.Errorf("etcd did not become healthy (see %s): %w", filepath.Join(dir, "etcd.log"), err)
	}
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ports[2]),
		"--cert-dir=" + dir,
		"--tls-cert-file=" + filepath.Join(dir, "server.crt"), "--tls-private-key-file=" + filepath.Join(dir, "server.key"),
		"--client-ca-file=" + filepath.Join(dir, "ca.crt"),
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		// No controller-manager runs, so nothing creates service accounts for pods.
		"--disable-admission-plugins=ServiceAccount",
		"--profiling=false",
	}
	if opts.EtcdCompactionInterval > 0 {
		args = append(args, "--etcd-compaction-interval="+opts.EtcdCompactionInterval.String())
	}
	if opts.WatchCacheSizes != "" {
		args = append(args, "--watch-cache-sizes="+opts.WatchCacheSizes)
	}
	if opts.AuditPolicy != "" {
		policy := filepath.Join(dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(opts.AuditPolicy), 0o600); err != nil {
			return nil, err
		}
		c.AuditLog = filepath.Join(dir, "audit.log")
		args = append(args, "--audit-policy-file="+policy, "--audit-log-path="+c.AuditLog)
	}
	args = append(args, opts.ExtraArgs...)
	c.URL = "https://127.0.0.1:" + strconv.Itoa(ports[2])
	c.apiBin, c.apiArgs = apiBin, args
	if err := c.startAPIServer(ctx); err != nil {
		return nil, err
	}
	client := c.httpClient()
	defer client.CloseIdleConnections()
	if err := waitHTTP(ctx, client, c.URL+"/api/v1/namespaces/default", c.Token, c.waits[1]); err != nil {
		return nil, fmt.Errorf("default namespace: %w", err)
	}
	c.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := c.writeKubeconfig(); err != nil {
		return nil, err
	}
	return c, nil
}

// startAPIServer launches kube-apiserver and waits until it is ready.
func (c *Cluster) startAPIServer(ctx context.Context) error {
	var err error
	c.apiserver, err = c.launch(c.apiBin, "kube-apiserver.log", c.apiArgs...)
	if err != nil {
		return err
	}
	client := c.httpClient()
	defer client.CloseIdleConnections()
	if err := waitHTTP(ctx, client, c.URL+"/readyz", c.Token, c.waits[len(c.waits)-1]); err != nil {
		return fmt.Errorf("kube-apiserver did not become ready (see %s): %w", filepath.Join(c.Dir, "kube-apiserver.log"), err)
	}
	return nil
}

// APIServerPID is the process id of the running kube-apiserver (a new one after
// RestartAPIServer), 0 if none was started: for reading its CPU time, say.
func (c *Cluster) APIServerPID() int {
	if c.apiserver == nil || c.apiserver.Process == nil {
		return 0
	}
	return c.apiserver.Process.Pid
}

// RestartAPIServer kills kube-apiserver (SIGKILL: no graceful shutdown, as a crash) and
// starts it again on the same port with the same etcd, waiting until it is ready.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	_ = c.apiserver.Process.Kill()
	<-c.waits[1]
	c.waits = c.waits[:1]
	return c.startAPIServer(ctx)
}

func (c *Cluster) launch(bin, logName string, args ...string) (*exec.Cmd, error) {
	log, err := os.OpenFile(filepath.Join(c.Dir, logName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group: a Ctrl-C of `go test` must not leave it orphaned half-way.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	done := make(chan error, 1)
	go func() {
		done <- cmd.Wait()
		log.Close()
		close(done)
	}()
	c.waits = append(c.waits, done)
	return cmd, nil
}

// Stop terminates kube-apiserver, then etcd, waits for both to exit (so their ports are
// free) and removes the scratch directory. Set KINFORMER_KEEP_CLUSTER_DIR=1 to keep it.
func (c *Cluster) Stop() {
	procs := []*exec.Cmd{c.apiserver, c.etcd}
	waits := []chan error{nil, nil}
	if len(c.waits) > 1 {
		waits[0] = c.waits[1]
	}
	if len(c.waits) > 0 {
		waits[1] = c.waits[0]
	}
	for i, p := range procs {
		if p == nil || p.Process == nil {
			continue
		}
		_ = p.Process.Signal(syscall.SIGTERM)
		select {
		case <-waits[i]:
		case <-time.After(15 * time.Second):
			_ = p.Process.Kill()
			<-waits[i]
		}
	}
	if os.Getenv("KINFORMER_KEEP_CLUSTER_DIR") == "" {
		_ = os.RemoveAll(c.Dir)
	}
}

func (c *Cluster) httpClient() *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.CAData)
	return &http.Client{Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

func (c *Cluster) writeKubeconfig() error {
	doc := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: e2e
clusters:
- name: e2e
  cluster: {server: %q, certificate-authority: ca.crt}
users:
- name: admin
  user: {token: %q}
contexts:
- name: e2e
  context: {cluster: e2e, user: admin, namespace: default}
`, c.URL, c.Token)
	return os.WriteFile(c.Kubeconfig, []byte(doc), 0o600)
}

// waitHTTP polls url until it answers 200, the process exits, or ctx ends.
func waitHTTP(ctx context.Context, client *http.Client, url, token string, exited <-chan error) error {
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: %s", url, resp.Status)
		}
		last = err
		select {
		case err := <-exited:
			return fmt.Errorf("the process exited: %v (last probe: %v)", err, last)
		case <-ctx.Done():
			return fmt.Errorf("%w (last probe: %v)", ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// freePorts asks the kernel for n distinct free ports.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
