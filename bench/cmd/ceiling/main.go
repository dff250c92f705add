// Command ceiling is the stream server's reference client: it reads the same watch (and,
// with -list, the same paginated list) that the runners read, and does nothing else with
// the bytes than the least any client must do, so its rate is the limit a client can
// reach on this machine against this server. Mode "frame" reads and splits frames on
// newlines; "tokenize" also runs encoding/json's tokenizer over every event. With
// -latency (mode frame, against a server started with -rate) it also times each event
// from the send time the server stamped on it: the latency floor of any client, before
// decoding. With -protobuf it reads the same objects in protobuf, as the stream server
// serves them when started with -protobuf-objects, in mode frame only: a watch frame is
// a 4-byte big-endian length and that many bytes, a list the k8s\x00 magic and an
// envelope whose items are found by their length prefixes, nothing of them decoded.
// Each line also gives the process's CPU time over the measurement. The harness runs it
// for its limit line, for the read+frame rows of the latency scenarios, and for the
// read+frame-protobuf rows (the floor of the protobuf bytes) of the scenarios that
// kinformer-protobuf runs.
//
//	ceiling -url URL [-resource pods] [-namespace bench] [-events N] [-protobuf]
//	        [-modes frame,tokenize] [-latency] [-list [-limit 500] [-list-modes frame,tokenize]]
//	        [-metadata-only] [-ca FILE [-http2=false]] [-timeout 10m]
//
// It prints one JSON line per measurement on stdout, and exits 1 on the first failure.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	log.SetPrefix("ceiling: ")
	if err := run(os.Args[1:]); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("ceiling", flag.ExitOnError)
	var o options
	fs.StringVar(&o.URL, "url", "", "the server's base URL (required)")
	fs.StringVar(&o.Resource, "resource", "pods", "resource to read")
	fs.StringVar(&o.Namespace, "namespace", "bench", `namespace ("-" for all)`)
	fs.IntVar(&o.Events, "events", 100000, "watch events to read per mode (the server's -watch-events must be 0 or at least this)")
	fs.IntVar(&o.Limit, "limit", 500, "list page size (-1: one page)")
	fs.BoolVar(&o.MetadataOnly, "metadata-only", false, "ask for PartialObjectMetadata")
	fs.BoolVar(&o.Latency, "latency", false, "in mode frame, also time each stamped event from its send time (the server's -rate must be set)")
	fs.BoolVar(&o.Protobuf, "protobuf", false, "read in protobuf (the server's -protobuf-objects must be set); mode frame only")
	modes := fs.String("modes", "frame,tokenize", `watch measurements, in order ("" for none)`)
	list := fs.Bool("list", false, "also time reading the whole paginated list (list-frame, list-tokenize)")
	listModes := fs.String("list-modes", "frame,tokenize", "with -list: the list measurements, in order")
	ca := fs.String("ca", "", "PEM file of the certificate to trust (for https)")
	h2 := fs.Bool("http2", true, "use HTTP/2 over https (as client-go does)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	_ = fs.Parse(args)
	if o.URL == "" || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("ceiling needs -url and no arguments")
	}
	tr := &http.Transport{DisableCompression: true, ForceAttemptHTTP2: *h2}
	if *ca != "" {
		pem, err := os.ReadFile(*ca)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s: no certificate", *ca)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	o.Client = &http.Client{Transport: tr}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	out := json.NewEncoder(os.Stdout)
	for _, m := range strings.Split(*modes, ",") {
		if m = strings.TrimSpace(m); m == "" {
			continue
		}
		r, err := readWatch(ctx, o, m)
		if err != nil {
			return fmt.Errorf("%s: %w", m, err)
		}
		_ = out.Encode(r)
	}
	if *list {
		for _, m := range strings.Split(*listModes, ",") {
			if m = strings.TrimSpace(m); m == "" {
				continue
			}
			r, err := readList(ctx, o, m)
			if err != nil {
				return fmt.Errorf("list-%s: %w", m, err)
			}
			_ = out.Encode(r)
		}
	}
	return nil
}
