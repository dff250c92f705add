package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/cluster"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// RealCluster starts a real etcd + kube-apiserver on loopback and creates pods pods in
// namespace "bench" through the API (8 writers), for the real-apiserver scenarios.
func RealCluster(ctx context.Context, pods int) (kubeconfig string, stop func(), err error) {
	c, err := cluster.Start(ctx, cluster.Options{})
	if err != nil {
		return "", nil, err
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: c.Kubeconfig})
	if err != nil {
		return "", nil, err
	}
	cfg.QPS = -1 // creating 10k pods is the set-up, not the measurement
	client, err := listwatch.New(cfg)
	if err != nil {
		return "", nil, err
	}
	defer client.CloseIdleConnections()
	nsInfo, err := client.Discover(ctx, "namespaces")
	if err != nil {
		return "", nil, err
	}
	ns := &object.Raw{TypeMeta: object.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: object.ObjectMeta{Name: "bench"}}
	if _, err := listwatch.For[*object.Raw](client, nsInfo, "").Create(ctx, ns); err != nil {
		return "", nil, err
	}
	podInfo, err := client.Discover(ctx, "pods")
	if err != nil {
		return "", nil, err
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
		return "", nil, err
	}
	fmt.Printf("bench: created %d pods in the real apiserver in %s\n", pods, time.Since(began).Round(time.Second))
	return c.Kubeconfig, c.Stop, nil
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
