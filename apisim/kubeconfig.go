package apisim

import (
	"fmt"
	"os"
)

// WriteKubeconfig writes a kubeconfig pointing at the simulator's URL, with its token if
// it has one, so any client (kinformer, kubectl) can reach it.
func (s *Server) WriteKubeconfig(path, url string) error {
	user := "{}"
	if s.opts.Token != "" {
		user = fmt.Sprintf("{token: %q}", s.opts.Token)
	}
	doc := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: kinformer-sim
clusters:
- name: kinformer-sim
  cluster: {server: %q}
users:
- name: kinformer-sim
  user: %s
contexts:
- name: kinformer-sim
  context: {cluster: kinformer-sim, user: kinformer-sim, namespace: default}
`, url, user)
	return os.WriteFile(path, []byte(doc), 0o600)
}
