// Package simtest starts a simulated apiserver (package apisim) and a client for it in
// tests, and checks that the test leaves no goroutine behind. KubeconfigClient serves
// tests against any apiserver, simulated or real, reached through a kubeconfig.
//
// The pairing is a package because most packages' tests need it, and because the order
// of its cleanups matters: the goroutine check is registered first so that it runs
// last, after the client and the simulator have closed. It is a test rig, not part of
// the engine.
package simtest
