package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/cluster"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// RealControlPlane is a running real control plane with its pods created, as
// Runner.Real starts it.
type RealControlPlane struct {
	Kubeconfig string
	// APIServerPID, if set, returns kube-apiserver's process id (0: unknown): the
	// harness reads that process's CPU time before and after each runner process.
	APIServerPID func() int
	Stop         func()
}

// RealCluster starts a real etcd + kube-apiserver on loopback and creates pods pods in
// namespace "bench" through the API (8 writers), for the real-apiserver scenarios.
func RealCluster(ctx context.Context, pods int) (_ *RealControlPlane, err error) {
	c, err := cluster.Start(ctx, cluster.Options{})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: c.Kubeconfig})
	if err != nil {
		return nil, err
	}
	cfg.QPS = -1 // creating 10k pods is the set-up, not the measurement
	client, err := listwatch.New(cfg)
	if err != nil {
		return nil, err
	}
	defer client.CloseIdleConnections()
	nsInfo, err := client.Discover(ctx, "namespaces")
	if err != nil {
		return nil, err
	}
	ns := &object.Raw{TypeMeta: object.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: object.ObjectMeta{Name: "bench"}}
	if _, err := listwatch.For[*object.Raw](client, nsInfo, "").Create(ctx, ns); err != nil {
		return nil, err
	}
	podInfo, err := client.Discover(ctx, "pods")
	if err != nil {
		return nil, err
	}
	res := listwatch.For[*object.Raw](client, podInfo, "bench")
	began := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < pods; i = int(next.Add(1)) - 1 {
				p, err := realPod(i)
				if err == nil {
					_, err = res.Create(ctx, p)
				}
				if err != nil {
					errs <- fmt.Errorf("creating pod %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	fmt.Printf("bench: created %d pods in the real apiserver in %s\n", pods, time.Since(began).Round(time.Second))
	return &RealControlPlane{Kubeconfig: c.Kubeconfig, APIServerPID: c.APIServerPID, Stop: c.Stop}, nil
}

// clockTicks is the unit of /proc/PID/stat's utime and stime: USER_HZ, sysconf
// (_SC_CLK_TCK), 100 on every Linux architecture Go runs on.
const clockTicks = 100

// processCPU is the CPU time (user + system) process pid has used, from the utime and
// stime of /proc/PID/stat (fields 14 and 15), in clock ticks of 10 ms.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime + stime from the text of a /proc/PID/stat. The command name,
// field 2, is in parentheses and may hold spaces and parentheses itself: the fields are
// counted from after its last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat %q: no command name", stat)
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] { // utime, stime
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// apiserverIdleWindow is how long the harness watches the apiserver with no client but
// itself, before the first real-apiserver run, for its CPU use at rest.
const apiserverIdleWindow = 5 * time.Second

// idleCPU is the CPU seconds per second process pid uses over apiserverIdleWindow (0
// if it cannot be read or ctx ends first).
func idleCPU(ctx context.Context, pid int) float64 {
	before, err := processCPU(pid)
	if err != nil {
		return 0
	}
	began := time.Now()
	select {
	case <-ctx.Done():
		return 0
	case <-time.After(apiserverIdleWindow):
	}
	after, err := processCPU(pid)
	if err != nil {
		return 0
	}
	return (after - before).Seconds() / time.Since(began).Seconds()
}

// realPod is pod i as a Deployment's ReplicaSet would create it: labels, an owner, and
// a container with resources, probes, env and mounts. (No kubelet runs, so no status.)
func realPod(i int) (*object.Raw, error) {
	rs := fmt.Sprintf("web-%d-7d9f8c6b5", i%100)
	doc := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{
			"name": fmt.Sprintf("%s-%05d", rs, i), "namespace": "bench",
			"labels":      map[string]string{"app": fmt.Sprintf("web-%d", i%100), "pod-template-hash": "7d9f8c6b5", "tier": "frontend"},
			"annotations": map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-11-01T10:00:00Z", "prometheus.io/scrape": "true"},
			"ownerReferences": []map[string]any{{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
				"uid": fmt.Sprintf("6f1c2a3b-0000-4000-8000-%012d", i%100), "controller": true, "blockOwnerDeletion": true}},
		},
		"spec": map[string]any{
			"containers": []map[string]any{{
				"name": "web", "image": "registry.k8s.io/nginx-slim:0.27",
				"ports":          []map[string]any{{"containerPort": 8080, "name": "http", "protocol": "TCP"}},
				"env":            []map[string]any{{"name": "POD_NAME", "valueFrom": map[string]any{"fieldRef": map[string]string{"fieldPath": "metadata.name"}}}, {"name": "LOG_LEVEL", "value": "info"}},
				"resources":      map[string]any{"requests": map[string]string{"cpu": "100m", "memory": "128Mi"}, "limits": map[string]string{"memory": "256Mi"}},
				"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": 8080}, "periodSeconds": 5},
				"livenessProbe":  map[string]any{"httpGet": map[string]any{"path": "/livez", "port": 8080}, "periodSeconds": 10},
				"volumeMounts":   []map[string]any{{"name": "config", "mountPath": "/etc/web"}},
			}},
			"volumes":     []map[string]any{{"name": "config", "configMap": map[string]string{"name": "web-config"}}},
			"tolerations": []map[string]any{{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}},
		},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var p object.Raw
	return &p, json.Unmarshal(b, &p)
}
