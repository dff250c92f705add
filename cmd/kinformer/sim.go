package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kinformer/kinformer/apisim"
)

func simCommand() command {
	return command{name: "sim", synopsis: "[--addr 127.0.0.1:0] [--kubeconfig-out FILE] [--token TOKEN] " +
		"[--bookmark-interval 5s] [--history 10000]",
		does: "serve the simulated apiserver until interrupted; --kubeconfig-out writes a kubeconfig for it",
		run:  runSim}
}

func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := simCommand().flagSet(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	out := fs.String("kubeconfig-out", "", "write a kubeconfig for the simulator to this file")
	token := fs.String("token", "", "require this bearer token")
	bookmarks := fs.Duration("bookmark-interval", 5*time.Second, "how often watches get a bookmark")
	window := fs.Int("history", 10000, "changes kept for watches from a past resourceVersion")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	sim := apisim.New(apisim.Options{Token: *token, BookmarkInterval: *bookmarks, HistoryWindow: *window})
	url, err := sim.Start(*addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", *addr, err)
	}
	defer sim.Close()
	if *out != "" {
		if err := sim.WriteKubeconfig(*out, url); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "simulated apiserver serving on %s\n", url)
	if *out != "" {
		fmt.Fprintf(stdout, "kubeconfig written to %s\n", *out)
	}
	<-ctx.Done()
	return nil
}
