package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

type watchFlags struct {
	namespace     string
	allNamespaces bool
	selector      string
	kubeconfig    string
	context       string
	websocket     bool
}

func runWatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f watchFlags
	fs.StringVar(&f.namespace, "n", "", "namespace (default: the kubeconfig context's)")
	fs.BoolVar(&f.allNamespaces, "A", false, "all namespaces")
	fs.StringVar(&f.selector, "l", "", "label selector")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.context, "context", "", "kubeconfig context")
	fs.BoolVar(&f.websocket, "websocket", false, "carry the watch over a websocket")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"usage: kinformer watch RESOURCE [-n NS | -A] [-l SELECTOR] [--kubeconfig FILE]"}
	}
	if f.selector != "" {
		if _, err := object.ParseSelector(f.selector); err != nil {
			return usageError{err.Error()}
		}
	}
	cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: f.kubeconfig, Context: f.context})
	if err != nil {
		return err
	}
	c, err := listwatch.New(cfg)
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	info, err := c.Discover(ctx, pos[0])
	if err != nil {
		return explain(err, cfg.Host)
	}
	ns := f.namespace
	switch {
	case f.allNamespaces:
		ns = ""
	case ns == "":
		ns = cfg.Namespace
		if ns == "" {
			ns = "default"
		}
	}
	r := listwatch.For[*object.Raw](c, info, ns)
	return watchLoop(ctx, r, f, cfg.Host, stdout)
}

// watchLoop lists, prints every object, then watches from the list's resourceVersion.
// A watch that ends cleanly resumes from the last resourceVersion seen; a 410 relists.
// It is a plain list+watch with no cache; the informer builds on the same protocol.
func watchLoop(ctx context.Context, r *listwatch.Resource[*object.Raw], f watchFlags, host string, out io.Writer) error {
	for {
		rv, err := r.ListAll(ctx, listwatch.ListOptions{LabelSelector: f.selector, Limit: 500}, func(l *object.List[*object.Raw]) error {
			for _, obj := range l.Items {
				printEvent(out, "LISTED", obj)
			}
			return nil
		})
		if err != nil {
			return explain(err, host)
		}
		for {
			w, err := r.Watch(ctx, listwatch.WatchOptions{ResourceVersion: rv, LabelSelector: f.selector,
				AllowBookmarks: true, TimeoutSeconds: 300, IdleTimeout: 330 * time.Second, WebSocket: f.websocket})
			if err != nil {
				if object.IsGone(err) {
					break
				}
				return explain(err, host)
			}
			rv, err = printStream(w, rv, out)
			w.Close()
			switch {
			case ctx.Err() != nil:
				return nil
			case errors.Is(err, io.EOF):
				continue // the server's timeout: resume
			case object.IsGone(err):
				fmt.Fprintln(out, "# resourceVersion expired (410): relisting")
			default:
				return explain(err, host)
			}
			break
		}
	}
}

func printStream(w *listwatch.Watch[*object.Raw], rv string, out io.Writer) (string, error) {
	for {
		ev, err := w.Next()
		if err != nil {
			return rv, err
		}
		rv = ev.Object.ResourceVersion
		if ev.Type != listwatch.Bookmark {
			printEvent(out, string(ev.Type), ev.Object)
		}
	}
}

func printEvent(out io.Writer, typ string, obj *object.Raw) {
	fmt.Fprintf(out, "%-8s %s rv=%s\n", typ, object.Key(obj), obj.ResourceVersion)
}

// explain adds what a user should check to the errors a newcomer meets first.
func explain(err error, host string) error {
	var netErr *net.OpError
	switch {
	case errors.Is(err, context.Canceled):
		return nil
	case errors.Is(err, listwatch.ErrUnknownResource):
		return fmt.Errorf("%w (check the name with `kubectl api-resources`)", err)
	case object.IsUnauthorized(err):
		return fmt.Errorf("the server rejected the credentials (401): check the kubeconfig user: %w", err)
	case object.IsForbidden(err):
		return fmt.Errorf("the kubeconfig user may not do this (403): %w", err)
	case errors.As(err, &netErr):
		return fmt.Errorf("cannot reach the apiserver at %s: %w", host, err)
	}
	return err
}
