package main

import (
	"errors"
	"os"

	"github.com/kinformer/kinformer/listwatch"
)

// loadConfig is how every command finds its cluster, as kubectl does: --kubeconfig, else
// $KUBECONFIG, else ~/.kube/config; and in a pod where none of those exists, the pod's
// ServiceAccount (listwatch.InClusterConfig), which is how deploy/ runs the controller
// manager and the fake kubelet. Its reads ask for enc (the command's --encoding).
func loadConfig(path, context string, enc listwatch.Encoding) (*listwatch.Config, error) {
	cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: path, Context: context})
	if errors.Is(err, listwatch.ErrNoKubeconfig) && os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		cfg, err = listwatch.InClusterConfig(listwatch.InClusterOptions{})
	}
	if err != nil {
		return nil, err
	}
	cfg.Encoding = enc
	return cfg, nil
}

// newClient is how every command builds its client from the Config it built
// (listwatch.New); a variable, so that tests see that Config.
var newClient = listwatch.New
