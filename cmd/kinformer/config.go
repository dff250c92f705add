package main

import (
	"errors"
	"os"

	"github.com/kinformer/kinformer/listwatch"
)

// loadConfig is how every command finds its cluster, as kubectl does: --kubeconfig, else
// $KUBECONFIG, else ~/.kube/config; and in a pod where none of those exists, the pod's
// ServiceAccount (listwatch.InClusterConfig), which is how deploy/ runs the controller
// manager and the fake kubelet.
func loadConfig(path, context string) (*listwatch.Config, error) {
	cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: path, Context: context})
	if errors.Is(err, listwatch.ErrNoKubeconfig) && os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return listwatch.InClusterConfig(listwatch.InClusterOptions{})
	}
	return cfg, err
}
