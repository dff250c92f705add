// Package selfsigned makes certificates for servers that have none given: the
// controller manager's secure port (as kube-controller-manager makes one when
// --tls-cert-file is not set), the benchmark's stream server and the chaos proxy.
//
// Each certificate is its own CA, so a client that trusts the returned PEM verifies the
// server; a scraper that was given no CA skips verification, as it does for
// kube-controller-manager's self-signed certificate.
package selfsigned
