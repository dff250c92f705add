package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// target is what watch and cache commands act on: a resource, a namespace, selectors.
type target struct {
	namespace     string
	allNamespaces bool
	selector      string
	fieldSelector string
	kubeconfig    string
	context       string
	encoding      encodingFlag
	websocket     bool
	streaming     bool
	verbose       bool
	trace         *tracing // watch --trace; nil for the other commands
}

func (t *target) flags(fs *flag.FlagSet) {
	fs.StringVar(&t.namespace, "n", "", "namespace (default: the kubeconfig context's)")
	fs.BoolVar(&t.allNamespaces, "A", false, "all namespaces")
	fs.StringVar(&t.selector, "l", "", "label selector")
	fs.StringVar(&t.fieldSelector, "field-selector", "", "field selector")
	fs.StringVar(&t.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else the pod's ServiceAccount)")
	fs.StringVar(&t.context, "context", "", "kubeconfig context")
	t.encoding.register(fs)
	fs.BoolVar(&t.websocket, "websocket", false, "carry watches over websockets")
	fs.BoolVar(&t.streaming, "streaming-list", false, "fetch the initial state with a streaming list")
	fs.BoolVar(&t.verbose, "v", false, "log relists and why, fallbacks, backoffs and broken watches (to stderr)")
}

// logger is the informers' logger: stderr at info level with -v, else silent.
func (t *target) logger(stderr io.Writer) *slog.Logger {
	if !t.verbose {
		return nil
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// session is an informer of raw objects for one resource, and what it needs.
type session struct {
	factory *informer.Factory
	inf     *informer.Informer[*object.Raw]
	res     *listwatch.Resource[*object.Raw]
	host    string
	trace   *tracing // nil: no tracing
}

// start runs the informer and waits for its sync, saying on progress what it waits for
// when that takes a while. It returns the reason when the informer cannot sync; stop
// ends it and waits for its goroutines either way.
func (s *session) start(ctx context.Context, progress io.Writer) (stop func(), err error) {
	runCtx, cancel := context.WithCancel(ctx)
	stop = func() {
		cancel()
		s.factory.Shutdown()
	}
	s.factory.Start(runCtx)
	if err := waitStarted(runCtx, s.inf, progress); err != nil {
		return stop, explain(err, s.host)
	}
	return stop, nil
}

// open parses the arguments and builds the client and an informer of raw objects for the
// one resource named.
func (t *target) open(ctx context.Context, fs *flag.FlagSet, args []string, usage usageError) (*session, error) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 1 {
		return nil, usage
	}
	if t.selector != "" {
		if _, err := object.ParseSelector(t.selector); err != nil {
			return nil, usageError{err.Error()}
		}
	}
	if err := t.encoding.check(); err != nil {
		return nil, err
	}
	cfg, err := loadConfig(t.kubeconfig, t.context, t.encoding.enc)
	if err != nil {
		return nil, err
	}
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	ns := t.namespace
	switch {
	case t.allNamespaces:
		ns = ""
	case ns == "":
		ns = cfg.Namespace
		if ns == "" {
			ns = "default"
		}
	}
	fopts := informer.FactoryOptions{Reflector: reflector.Options{WebSocket: t.websocket, StreamingList: t.streaming},
		Logger: t.logger(fs.Output())}
	if t.trace != nil {
		if fopts.Tracer, err = t.trace.tracer(); err != nil {
			return nil, err
		}
	}
	f := informer.NewFactory(c, fopts)
	inf, err := informer.For[*object.Raw](ctx, f, pos[0], informer.Selectors{Namespace: ns, LabelSelector: t.selector, FieldSelector: t.fieldSelector})
	if err != nil {
		c.CloseIdleConnections()
		return nil, explain(err, cfg.Host)
	}
	info, err := c.Discover(ctx, pos[0]) // cached by the call above
	if err != nil {
		c.CloseIdleConnections()
		return nil, explain(err, cfg.Host)
	}
	return &session{factory: f, inf: inf, res: listwatch.For[*object.Raw](c, info, ns), host: cfg.Host, trace: t.trace}, nil
}

func watchCommand() command {
	return command{name: "watch", synopsis: "RESOURCE " + targetFlags + " [--trace [--trace-every 100]]",
		does: "run an informer of RESOURCE and print what its handler receives (ADD, UPDATE, DELETE, key, " +
			"resourceVersion); with --trace, also the time sampled events spent in each stage of the pipeline",
		run: runWatch}
}

func runWatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := watchCommand()
	fs := cmd.flagSet(stderr)
	var t target
	t.flags(fs)
	t.trace = &tracing{}
	t.trace.flags(fs)
	s, err := t.open(ctx, fs, args, cmd.usageError())
	if err != nil {
		return err
	}
	return s.watch(ctx, stdout, stderr)
}

// watch prints every notification of the informer until ctx ends, or returns the reason
// the informer cannot sync (403, unreachable server, ...) if it fails to start. With
// tracing on, the handler also hands each key to the trace's worker after printing.
func (s *session) watch(ctx context.Context, out, progress io.Writer) error {
	var mu sync.Mutex // handler output, trace lines and the final error share out
	printf := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(out, format, args...)
		mu.Unlock()
	}
	enqueue := func(*object.Raw) {}
	hopts := informer.HandlerOptions{Name: "print"}
	if s.trace.enabled() {
		var stopTrace func()
		enqueue, stopTrace = s.trace.start(ctx, printf, progress, describe(s.inf.Name(), s.inf.Status().Encoding))
		defer stopTrace() // deferred first, so it runs after the informer has stopped
		hopts.Tracer = s.trace.collector
	}
	_, _ = s.inf.AddEventHandler(informer.HandlerFuncs[*object.Raw]{
		AddFunc: func(o *object.Raw, initial bool) {
			printf("%-7s %s rv=%s initial=%v\n", "ADD", object.Key(o), o.ResourceVersion, initial)
			enqueue(o)
		},
		UpdateFunc: func(_, o *object.Raw) {
			printf("%-7s %s rv=%s\n", "UPDATE", object.Key(o), o.ResourceVersion)
			enqueue(o)
		},
		DeleteFunc: func(o *object.Raw, fsu bool) {
			printf("%-7s %s rv=%s final-state-unknown=%v\n", "DELETE", object.Key(o), o.ResourceVersion, fsu)
			enqueue(o)
		},
	}, hopts)
	stop, err := s.start(ctx, progress)
	defer stop()
	if err != nil {
		return err
	}
	// On stderr, so that an empty namespace and a hung connection do not look alike.
	fmt.Fprintf(progress, "kinformer: synced %s: %d object(s); watching\n", describe(s.inf.Name(), s.inf.Status().Encoding),
		len(s.inf.Lister().List(object.Everything())))
	<-ctx.Done()
	return nil
}

// waitStarted waits for the informer to sync, but gives up at the first list error that
// retrying will not fix (401, 403, 404, an unreachable server), with that error. After the
// first seconds it writes to progress what it is waiting for (state and last error),
// whenever that changes and at least every ten seconds, so a slow sync is never silent.
func waitStarted(ctx context.Context, inf *informer.Informer[*object.Raw], progress io.Writer) error {
	const quiet, every = 2 * time.Second, 10 * time.Second
	began := time.Now()
	var said string
	var saidAt time.Time
	for {
		wctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		err := informer.WaitForSync(wctx, inf)
		cancel()
		if err == nil || ctx.Err() != nil {
			return nil
		}
		st := inf.Status()
		// Only an error the reflector backs off from: a streaming list that a server
		// refuses with a 400 is given up for list+watch, its reason left in LastError
		// while the list that follows runs.
		if st.LastError != nil && st.State == reflector.StateBackingOff && permanent(st.LastError) {
			return st.LastError
		}
		now := time.Now()
		if line := waitingFor(inf.Name(), st); now.Sub(began) >= quiet && (line != said || now.Sub(saidAt) >= every) {
			fmt.Fprintf(progress, "%s (waiting %s)\n", line, now.Sub(began).Round(time.Second))
			said, saidAt = line, now
		}
	}
}

// waitingFor describes an unsynced informer's status in one line.
func waitingFor(name string, st informer.SyncStatus) string {
	line := fmt.Sprintf("kinformer: waiting for %s to sync: %s", describe(name, st.Encoding), st.State)
	if st.LastError != nil {
		line += ", last error: " + st.LastError.Error()
	}
	return line
}

// describe is an informer's name as the commands' status lines show it, with the
// encoding its reads ask the apiserver for (its status's Encoding), when that is known:
// "default/pods (encoding=json)".
func describe(name string, enc listwatch.Encoding) string {
	if enc == "" {
		return name
	}
	return name + " (encoding=" + string(enc) + ")"
}

// permanent says whether retrying cannot fix err: a 400 (a field or shard selector the
// server does not take), 401, 403, 404, an unreachable server.
func permanent(err error) bool {
	var netErr *net.OpError
	return object.CodeOf(err) == http.StatusBadRequest || object.IsUnauthorized(err) || object.IsForbidden(err) ||
		object.IsNotFound(err) || errors.As(err, &netErr)
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
	case object.CodeOf(err) == http.StatusBadRequest:
		return fmt.Errorf("the server refused the request (400): check the selectors: %w", err)
	case errors.As(err, &netErr):
		return fmt.Errorf("cannot reach the apiserver at %s: %w", host, err)
	}
	return err
}
